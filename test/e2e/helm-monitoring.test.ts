// The chart's monitoring objects are opt-in and carry the shipped files unchanged: by default
// neither a PrometheusRule nor a dashboard ConfigMap renders; turned on, the PrometheusRule's
// groups are the rule file's (deploy/helm/metacontroller-ts/monitoring/metacontroller-ts-rules.yaml)
// and the ConfigMap holds the dashboard JSON under the label kube-prometheus-stack's Grafana
// sidecar watches, both with the namespace, labels and annotations asked for; the chart lints
// strictly with both on. Skipped, with the reason, when helm is not built (tools/helm/build.sh).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import type { KubeObject } from '../../src/core/kube-object.js'
import { parseManifests } from '../../src/testing/index.js'
import { CHART, HELM, HELM_SKIP } from '../support/helm-binary.js'

function template(...args: string[]): Promise<KubeObject[]> {
  return new Promise((resolve, reject) => {
    execFile(
      HELM,
      ['template', 'metacontroller-ts', CHART, '--namespace', 'engine', ...args],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`helm template ${args.join(' ')}: ${stderr}`))
        else resolve(parseManifests(stdout, `helm template ${args.join(' ')}`))
      }
    )
  })
}

function only(objects: readonly KubeObject[], kind: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind)
  assert.equal(found.length, 1, `one ${kind} in ${objects.map((o) => o.kind).join(', ')}`)
  const [first] = found
  assert.ok(first)
  return first
}

describe('the chart’s alerts and dashboard', { skip: HELM_SKIP }, () => {
  it('lints strictly with both turned on', async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        HELM,
        [
          'lint',
          '--strict',
          CHART,
          '--set',
          'prometheusRule.enabled=true',
          '--set',
          'grafanaDashboard.enabled=true',
        ],
        (error, stdout, stderr) => {
          if (error) reject(new Error(`helm lint: ${stdout}${stderr}`))
          else resolve(stdout)
        }
      )
    })
    assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/)
  })

  it('renders neither a PrometheusRule nor a dashboard ConfigMap by default', async () => {
    const kinds = (await template()).map((o) => o.kind)
    assert.ok(kinds.includes('Deployment'), kinds.join(', '))
    assert.ok(!kinds.includes('PrometheusRule'), kinds.join(', '))
    assert.ok(!kinds.includes('ConfigMap'), kinds.join(', '))
  })

  it('renders the rule file’s groups unchanged as a PrometheusRule where asked', async () => {
    const rule = only(
      await template(
        '--set',
        'prometheusRule.enabled=true',
        '--set',
        'prometheusRule.namespace=monitoring',
        '--set',
        'prometheusRule.labels.release=kube-prometheus-stack',
        '--set',
        'prometheusRule.annotations.team=platform'
      ),
      'PrometheusRule'
    )
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1')
    assert.equal(rule.metadata.namespace, 'monitoring')
    const labels = rule.metadata.labels ?? {}
    assert.equal(labels['release'], 'kube-prometheus-stack')
    assert.equal(labels['app.kubernetes.io/instance'], 'metacontroller-ts')
    assert.equal(rule.metadata.annotations?.['team'], 'platform')
    const file = parse(
      readFileSync(`${CHART}/monitoring/metacontroller-ts-rules.yaml`, 'utf8')
    ) as {
      groups: unknown[]
    }
    assert.deepEqual(rule['spec'], { groups: file.groups })
    const defaults = only(await template('--set', 'prometheusRule.enabled=true'), 'PrometheusRule')
    assert.equal(defaults.metadata.namespace, 'engine')
  })

  it('renders the dashboard JSON in a ConfigMap labelled for the Grafana sidecar', async () => {
    const map = only(
      await template(
        '--set',
        'grafanaDashboard.enabled=true',
        '--set',
        'grafanaDashboard.namespace=monitoring',
        '--set',
        'grafanaDashboard.annotations.grafana_folder=Kubernetes'
      ),
      'ConfigMap'
    )
    assert.equal(map.metadata.namespace, 'monitoring')
    assert.equal(map.metadata.labels?.['grafana_dashboard'], '1')
    assert.equal(map.metadata.annotations?.['grafana_folder'], 'Kubernetes')
    const data = (map['data'] ?? {}) as Record<string, string>
    assert.deepEqual(Object.keys(data), ['metacontroller-ts.json'])
    assert.deepEqual(
      JSON.parse(data['metacontroller-ts.json'] ?? ''),
      JSON.parse(readFileSync(`${CHART}/monitoring/metacontroller-ts-dashboard.json`, 'utf8'))
    )
    const relabelled = only(
      await template(
        '--set',
        'grafanaDashboard.enabled=true',
        '--set-json',
        'grafanaDashboard.labels={"dashboards":"engine"}'
      ),
      'ConfigMap'
    )
    assert.equal(relabelled.metadata.labels?.['dashboards'], 'engine')
  })
})
