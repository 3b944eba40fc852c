// The scanner the monitoring tests use to list the metric names of rules and dashboard queries.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { exposedSeriesNames, promqlMetricNames } from '../support/promql-metric-names.js'

describe('promqlMetricNames', () => {
  it('keeps metric names and drops functions, matchers, grouping, ranges, numbers and keywords', () => {
    const expr = `sum by (controller_name, url) (rate(a_total{code!~"200|3.."}[5m]))
      / on (url) group_left (x) sum(rate(b_total[$__rate_interval] offset 1h)) > 1e3
      or absent(c_seconds_bucket) unless histogram_quantile(0.99, d_bucket) > bool 5`
    assert.deepEqual(promqlMetricNames(expr), [
      'a_total',
      'b_total',
      'c_seconds_bucket',
      'd_bucket',
    ])
  })

  it('reads a metric named only by a __name__ matcher as none, rather than guessing', () => {
    assert.deepEqual(promqlMetricNames('{__name__="x"}'), [])
  })
})

describe('exposedSeriesNames', () => {
  it('offers a declared histogram family as its bucket, sum and count series', () => {
    const names = exposedSeriesNames(
      '# HELP h_seconds x\n# TYPE h_seconds histogram\n# TYPE g gauge\nc_total{a="b"} 1\nu 2\n'
    )
    assert.deepEqual([...names].sort(), [
      'c_total',
      'g',
      'h_seconds',
      'h_seconds_bucket',
      'h_seconds_count',
      'h_seconds_sum',
      'u',
    ])
  })
})
