import { test } from 'node:test'
import { runFaultScenario } from './fault-scenario.js'
import { killTargetLeader } from './faults.js'

for (const delivery of ['at-least-once', 'exactly-once'] as const) {
  test(
    `${delivery}: kill -9 of the target broker leading most partitions, started again once its leaderships moved: 0 missing, 0 duplicates, order kept, verify passes`,
    { timeout: 600_000 },
    async t => {
      await runFaultScenario(t, { name: 'kill-target-leader', delivery, fault: killTargetLeader })
    }
  )
}
