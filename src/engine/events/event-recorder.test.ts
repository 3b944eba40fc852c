import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type {
  DynamicClient,
  PatchOptions,
  ResourceRef,
  WriteOptions,
} from '../../kube/dynamic-client.js'
import { FakeClock } from '../../runtime/clock/fake-clock.js'
import type { LogFields, Logger } from '../../runtime/diagnostics/logger.js'
import { EventRecorder } from './event-recorder.js'
import { settle, settleMany } from '../../../test/support/event-loop-turns.js'

interface CreateCall {
  readonly ref: ResourceRef
  readonly object: KubeObject
  readonly options: WriteOptions | undefined
}

interface PatchCall {
  readonly ref: ResourceRef
  readonly name: string
  readonly patch: unknown
  readonly options: PatchOptions
}

/** Implements the two DynamicClient methods the recorder uses, recording every call. */
class FakeEventsClient {
  readonly creates: CreateCall[] = []
  readonly patches: PatchCall[] = []
  /** When set, every write rejects with this error. */
  failWith: Error | undefined
  /** When set, writes wait for this promise before settling. */
  hold: Promise<void> | undefined

  async create(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject> {
    this.creates.push({ ref, object, options })
    if (this.hold !== undefined) await this.hold
    if (this.failWith !== undefined) throw this.failWith
    return object
  }

  async patch(
    ref: ResourceRef,
    name: string,
    patch: unknown,
    options: PatchOptions
  ): Promise<KubeObject> {
    this.patches.push({ ref, name, patch, options })
    if (this.hold !== undefined) await this.hold
    if (this.failWith !== undefined) throw this.failWith
    return { apiVersion: 'v1', kind: 'Event', metadata: { name } }
  }

  get writes(): number {
    return this.creates.length + this.patches.length
  }
}

/** A logger that keeps every line it is given. */
class RecordingLogger implements Logger {
  readonly lines: { level: string; message: string; fields: LogFields | undefined }[] = []
  debug(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'debug', message, fields })
  }
  info(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'info', message, fields })
  }
  warn(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'warn', message, fields })
  }
  error(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'error', message, fields })
  }
  v(level: number, message: string, fields?: LogFields): void {
    this.lines.push({ level: `v${level}`, message, fields })
  }
  enabled(): boolean {
    return true
  }
  child(): Logger {
    return this
  }
  named(): Logger {
    return this
  }
}

const START = Date.UTC(2024, 0, 2, 3, 4, 5)

function setup() {
  const client = new FakeEventsClient()
  const clock = new FakeClock(START)
  const log = new RecordingLogger()
  const recorder = new EventRecorder(client as unknown as DynamicClient, { clock, log })
  return { client, clock, log, recorder }
}

const web: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Web',
  metadata: { name: 'web', namespace: 'ns', uid: 'uid-web', resourceVersion: '42' },
}

const node: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'ClusterWeb',
  metadata: { name: 'global', uid: 'uid-global' },
}

describe('EventRecorder', () => {
  it('POSTs a first event as a core/v1 Event about the object, with count 1', async () => {
    const { client, recorder } = setup()
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.equal(client.creates.length, 1)
    assert.equal(client.patches.length, 0)
    const call = client.creates[0]
    assert.ok(call)
    assert.deepEqual(call.ref, { group: '', version: 'v1', resource: 'events', namespaced: true })
    const event = call.object
    assert.equal(event.apiVersion, 'v1')
    assert.equal(event.kind, 'Event')
    assert.equal(event.metadata.namespace, 'ns')
    assert.match(event.metadata.name ?? '', /^web\.[0-9a-f]{16}$/)
    assert.deepEqual(event['involvedObject'], {
      apiVersion: 'example.com/v1',
      kind: 'Web',
      name: 'web',
      namespace: 'ns',
      uid: 'uid-web',
      resourceVersion: '42',
    })
    assert.equal(event['type'], 'Warning')
    assert.equal(event['reason'], 'SyncError')
    assert.equal(event['message'], 'hook failed')
    assert.deepEqual(event['source'], { component: 'metacontroller' })
    assert.equal(event['count'], 1)
    assert.equal(event['firstTimestamp'], new Date(START).toISOString())
    assert.equal(event['lastTimestamp'], new Date(START).toISOString())
  })

  it('uses the configured component as source.component', async () => {
    const client = new FakeEventsClient()
    const recorder = new EventRecorder(client as unknown as DynamicClient, {
      component: 'my-engine',
      clock: new FakeClock(),
    })
    recorder.record(web, 'Normal', 'Synced', 'ok')
    await recorder.flush()
    assert.deepEqual(client.creates[0]?.object['source'], { component: 'my-engine' })
  })

  it('PATCHes a repeat of the same reason and message to count 2 on the first event', async () => {
    const { client, clock, recorder } = setup()
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    clock.advance(5000)
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.equal(client.creates.length, 1)
    assert.equal(client.patches.length, 1)
    const patch = client.patches[0]
    assert.ok(patch)
    assert.equal(patch.name, client.creates[0]?.object.metadata.name)
    assert.equal(patch.ref.resource, 'events')
    assert.deepEqual(patch.patch, {
      count: 2,
      lastTimestamp: new Date(START + 5000).toISOString(),
    })
    assert.equal(patch.options.type, 'merge')
    assert.equal(patch.options.namespace, 'ns')
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.deepEqual((client.patches[1]?.patch as { count: number }).count, 3)
  })

  it('aggregates repeats recorded back to back, before the first write has finished', async () => {
    const { client, recorder } = setup()
    for (let i = 0; i < 3; i++) recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.equal(client.creates.length, 1)
    assert.deepEqual(
      client.patches.map((call) => (call.patch as { count: number }).count),
      [2, 3]
    )
  })

  it('creates a new event for another reason, message, type or object', async () => {
    const { client, recorder } = setup()
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    recorder.record(web, 'Warning', 'SyncError', 'other message')
    recorder.record(web, 'Warning', 'OtherReason', 'hook failed')
    recorder.record(web, 'Normal', 'SyncError', 'hook failed')
    recorder.record(node, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.equal(client.creates.length, 5)
    assert.equal(client.patches.length, 0)
  })

  it('writes events about cluster-scoped objects to namespace default', async () => {
    const { client, recorder } = setup()
    recorder.record(node, 'Normal', 'Synced', 'ok')
    recorder.record(node, 'Normal', 'Synced', 'ok')
    await recorder.flush()
    const event = client.creates[0]?.object
    assert.ok(event)
    assert.equal(event.metadata.namespace, 'default')
    assert.equal((event['involvedObject'] as Record<string, unknown>)['namespace'], undefined)
    assert.equal(client.patches[0]?.options.namespace, 'default')
  })

  it('writes events about an object with an empty namespace to namespace default', async () => {
    const { client, recorder } = setup()
    recorder.record(
      { ...node, metadata: { ...node.metadata, namespace: '' } },
      'Normal',
      'Synced',
      'ok'
    )
    await recorder.flush()
    assert.equal(client.creates[0]?.object.metadata.namespace, 'default')
  })

  it('drops events about one object past a burst of 25, and lets one through after 300 s', async () => {
    const { client, clock, log, recorder } = setup()
    for (let i = 0; i < 30; i++) recorder.record(web, 'Warning', 'SyncError', `failure ${i}`)
    await recorder.flush()
    assert.equal(client.writes, 25, 'the burst passes, the rest is dropped')
    assert.equal(client.creates.at(-1)?.object['message'], 'failure 24')
    assert.equal(log.lines.filter((line) => line.message.includes('spam filter')).length, 5)
    clock.advance(299_999)
    recorder.record(web, 'Warning', 'SyncError', 'still too early')
    await recorder.flush()
    assert.equal(client.writes, 25)
    clock.advance(1)
    recorder.record(web, 'Warning', 'SyncError', 'after 300 s')
    recorder.record(web, 'Warning', 'SyncError', 'one too many')
    await recorder.flush()
    assert.equal(client.writes, 26, 'one token refilled')
    assert.equal(client.creates.at(-1)?.object['message'], 'after 300 s')
  })

  it('counts repeats against the spam filter too', async () => {
    const { client, recorder } = setup()
    for (let i = 0; i < 40; i++) recorder.record(web, 'Warning', 'SyncError', 'same')
    await recorder.flush()
    assert.equal(client.creates.length, 1)
    assert.equal(client.patches.length, 24)
  })

  it('keeps a separate spam budget per object', async () => {
    const { client, recorder } = setup()
    for (let i = 0; i < 30; i++) recorder.record(web, 'Normal', 'R', `m${i}`)
    for (let i = 0; i < 30; i++) recorder.record(node, 'Normal', 'R', `m${i}`)
    await recorder.flush()
    assert.equal(client.writes, 50)
  })

  it('logs a failing write instead of throwing, and creates afresh after it', async () => {
    const { client, log, recorder } = setup()
    client.failWith = new Error('apiserver down')
    assert.doesNotThrow(() => {
      recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    })
    await assert.doesNotReject(recorder.flush())
    const warning = log.lines.find((line) => line.level === 'warn')
    assert.ok(warning, 'the failure is logged')
    assert.match(warning.message, /cannot record event/)
    assert.equal(warning.fields?.['error'], client.failWith)
    assert.equal(warning.fields['reason'], 'SyncError')
    client.failWith = undefined
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.equal(client.creates.length, 2, 'a failed first write is not patched later')
    assert.equal(client.patches.length, 0)
    assert.equal(client.creates[1]?.object['count'], 1)
  })

  it('logs a failing repeat PATCH and starts a new event on the next repeat', async () => {
    const { client, log, recorder } = setup()
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    client.failWith = new Error('event expired')
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await assert.doesNotReject(recorder.flush())
    assert.equal(log.lines.filter((line) => line.level === 'warn').length, 1)
    client.failWith = undefined
    recorder.record(web, 'Warning', 'SyncError', 'hook failed')
    await recorder.flush()
    assert.equal(client.creates.length, 2)
    assert.equal(client.creates[1]?.object['count'], 1)
  })

  it('flush() resolves only once every pending write has settled', async () => {
    const { client, recorder } = setup()
    let release: () => void = () => undefined
    client.hold = new Promise((resolve) => {
      release = resolve
    })
    recorder.record(web, 'Normal', 'A', 'one')
    recorder.record(web, 'Normal', 'B', 'two')
    let flushed = false
    const flushing = recorder.flush().then(() => {
      flushed = true
    })
    await settleMany(10)
    assert.equal(flushed, false, 'still waiting for the held write')
    assert.equal(client.creates.length, 1, 'writes are made one after another')
    release()
    await flushing
    assert.equal(client.creates.length, 2)
  })

  it('flush() resolves at once when nothing was recorded', async () => {
    const { client, recorder } = setup()
    let flushed = false
    const flushing = recorder.flush().then(() => {
      flushed = true
    })
    await settle()
    assert.equal(flushed, true, 'resolved within one turn of the event loop')
    await flushing
    assert.equal(client.creates.length, 0, 'nothing written')
  })
})
