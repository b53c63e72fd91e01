import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Registry } from 'prom-client'
import { OffsetsMetrics } from '../../../../src/sidecar/metrics/offsets-metrics.js'

test('offset-sync and group-sync metrics count what the observer reports and age checkpoints at scrape time', async () => {
  const registry = new Registry()
  const flow = { flow: 'a->b', source: 'a', target: 'b' }
  const metrics = new OffsetsMetrics(registry, () => [{ flow, groups: [{ group: 'orders-app', lastCheckpointMs: 10_000 }] }], () => 25_000)
  metrics.syncsWritten(flow, 3, 2)
  metrics.syncWriteFailed(flow)
  metrics.checkpointsWritten(flow, 'orders-app', 4)
  metrics.groupOffsetsSynced(flow, 'orders-app', 4)
  metrics.groupSkipped(flow, 'busy-app', 'active')
  metrics.translationFailed(flow, 'orders-app', 'not-yet-mirrored')
  const text = await registry.metrics()
  const labels = 'flow="a->b",source="a",target="b"'
  for (const line of [
    `kafka_mirror_offset_syncs_written_total{${labels}} 5`,
    `kafka_mirror_offset_sync_failures_total{${labels}} 1`,
    `kafka_mirror_checkpoints_written_total{${labels},group="orders-app"} 4`,
    `kafka_mirror_group_offsets_synced_total{${labels},group="orders-app"} 4`,
    `kafka_mirror_group_sync_skipped_total{${labels},group="busy-app",reason="active"} 1`,
    `kafka_mirror_offset_translation_failures_total{${labels},group="orders-app",reason="not-yet-mirrored"} 1`,
    `kafka_mirror_checkpoint_age_seconds{${labels},group="orders-app"} 15`,
  ]) assert.ok(text.includes(line), `missing: ${line}\n${text}`)
})
