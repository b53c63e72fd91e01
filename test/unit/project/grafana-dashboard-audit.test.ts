import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MAIN_VIEW_ROWS } from '../../../grafana/src/dashboard.js'
import { Metrics } from '../../../src/sidecar/metrics/metric-names.js'
import { dashboardQueries } from '../../helpers/dashboard-queries.js'

/** The signals only this mirror has: each needs a panel a person sees without scrolling. */
const AUDIT_SIGNALS = [Metrics.lostRecords, Metrics.digestMismatches, Metrics.offsetSyncFailures, Metrics.corruptBatches, Metrics.checkpointAge]

test('the main view has a panel for each audit signal: lost records, digest mismatches, offset-sync failures, corrupt source batches, checkpoint age', () => {
  const mainView = dashboardQueries().filter(query => (MAIN_VIEW_ROWS as readonly string[]).includes(query.row))
  const missing = AUDIT_SIGNALS.filter(metric => !mainView.some(query => query.expr.includes(metric.name))).map(metric => metric.name)
  assert.deepEqual(missing, [])
})

test('the audit counters read 0, not "no data", before their first event', () => {
  for (const metric of [Metrics.lostRecords, Metrics.digestMismatches, Metrics.offsetSyncFailures, Metrics.corruptBatches]) {
    const query = dashboardQueries().find(candidate => candidate.row === 'Audit' && candidate.expr.includes(metric.name))
    assert.match(query?.expr ?? '', / or vector\(0\)$/, metric.name)
  }
})
