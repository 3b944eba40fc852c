import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { controllerHooks, hookExportName } from './hook-exports.js'

describe('hooks by controller name (metactl dev, metactl render)', () => {
  const sync = () => ({})
  const controller = (kind: string, name: string): KubeObject => ({
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind,
    metadata: { name },
  })

  it('names the export after metadata.name in camelCase', () => {
    assert.equal(hookExportName('web-policy'), 'webPolicy')
    assert.equal(hookExportName('static_site.v2'), 'staticSiteV2')
    assert.equal(hookExportName('proj'), 'proj')
  })

  it("uses a controller's own export, else the top-level hooks", () => {
    const own = { sync: () => ({ own: true }) }
    const hooks = controllerHooks(
      { sync, webPolicy: own },
      [controller('DecoratorController', 'web-policy'), controller('CompositeController', 'site')],
      'src/hook.ts'
    )
    assert.equal(hooks.get('web-policy')?.sync, own.sync)
    assert.equal(hooks.get('web-policy')?.from, 'webPolicy')
    assert.equal(hooks.get('site')?.sync, sync)
  })

  it('says which export to add when a controller has no hooks', () => {
    assert.throws(
      () =>
        controllerHooks({ other: 1 }, [controller('DecoratorController', 'web-policy')], 'h.ts'),
      /h\.ts has no hooks for DecoratorController web-policy: export webPolicy = \{ sync \}.*exports: other/
    )
    assert.throws(
      () => controllerHooks({ webPolicy: sync }, [controller('X', 'web-policy')], 'h.ts'),
      /export webPolicy .* must be an object with a sync function/
    )
  })
})
