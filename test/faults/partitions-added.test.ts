import { test } from 'node:test'
import { runFaultScenario } from './fault-scenario.js'
import { partitionsAdded } from './faults.js'

for (const delivery of ['at-least-once', 'exactly-once'] as const) {
  test(
    `${delivery}: partitions added to the mirrored source topic under traffic (12 -> 24): 0 missing, 0 duplicates, order kept, verify passes`,
    { timeout: 600_000 },
    async t => {
      await runFaultScenario(t, { name: 'partitions-added', delivery, fault: partitionsAdded, catchUpTimeoutMs: 180_000 })
    }
  )
}
