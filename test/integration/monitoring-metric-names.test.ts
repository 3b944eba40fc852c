// The alert rules and the Grafana dashboard the chart ships (deploy/helm/metacontroller-ts/
// monitoring/) read only metrics a running engine exports: `metactl run` is started on the
// tier's control plane, its /metrics is scraped over HTTP, and every metric name in a rule's
// expression or a dashboard query must be among the series it offers (a histogram as its
// `_bucket`, `_sum` and `_count` series).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { parse } from 'yaml'
import { startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { METACONTROLLER_CRDS } from '../support/engine-fixture.js'
import { exposedSeriesNames, promqlMetricNames } from '../support/promql-metric-names.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const MONITORING = 'deploy/helm/metacontroller-ts/monitoring'

/** Every alert's and recording rule's expression in the rule file. */
function ruleExpressions(): Map<string, string> {
  const file = parse(readFileSync(`${MONITORING}/metacontroller-ts-rules.yaml`, 'utf8')) as {
    groups: { rules: { alert?: string; record?: string; expr: string }[] }[]
  }
  const exprs = new Map<string, string>()
  for (const rule of file.groups.flatMap((g) => g.rules)) {
    exprs.set(`rule ${rule.alert ?? rule.record ?? '?'}`, rule.expr)
  }
  return exprs
}

/** Every panel target's `expr` and every query variable's `query` in the dashboard. */
function dashboardExpressions(): Map<string, string> {
  const exprs = new Map<string, string>()
  const walk = (node: unknown, where: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        walk(item, `${where}[${String(i)}]`)
      })
      return
    }
    if (typeof node !== 'object' || node === null) return
    const record = node as Record<string, unknown>
    if (typeof record['expr'] === 'string') exprs.set(where, record['expr'])
    if (record['type'] === 'query' && typeof record['query'] === 'string') {
      exprs.set(where, record['query'])
    }
    for (const [key, value] of Object.entries(record)) walk(value, `${where}.${key}`)
  }
  walk(JSON.parse(readFileSync(`${MONITORING}/metacontroller-ts-dashboard.json`, 'utf8')), '$')
  return exprs
}

describe('monitoring queries against a running engine', () => {
  let plane: ControlPlane
  let engine: SpawnedEngine

  before(async () => {
    plane = await startControlPlane({ crds: METACONTROLLER_CRDS })
    // No hosted controller (the shared cluster holds other tests'): the families are declared
    // at start, whether or not a series has been observed yet.
    engine = spawnEngine(plane.kubeconfigPath, ['--target-label-selector', 'monitoring=none'])
  })

  after(async () => {
    engine.kill()
    await engine.exited
    await plane.stop()
  })

  it('exports every metric the alert rules and the dashboard query', async () => {
    const address = (await engine.line('serving metrics'))['address'] as string
    const response = await request(`http://${address}/metrics`)
    assert.equal(response.statusCode, 200)
    const exported = exposedSeriesNames(await response.body.text())
    const queries = new Map([...ruleExpressions(), ...dashboardExpressions()])
    assert.ok(queries.size >= 20, `found only ${String(queries.size)} queries`)
    const missing: string[] = []
    for (const [where, expr] of queries) {
      const names = promqlMetricNames(expr)
      assert.ok(names.length > 0, `${where} reads no metric: ${expr}`)
      for (const name of names) if (!exported.has(name)) missing.push(`${where}: ${name}`)
    }
    assert.deepEqual(missing, [], `not exported by the engine:\n${missing.join('\n')}`)
  })
})
