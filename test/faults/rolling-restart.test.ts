import { test } from 'node:test'
import { runFaultScenario } from './fault-scenario.js'
import { rollingRestarts } from './faults.js'

for (const delivery of ['at-least-once', 'exactly-once'] as const) {
  test(
    `${delivery}: a rolling restart of every target broker, then of every source broker (SIGTERM, started again, replicas in sync, next): 0 missing, 0 duplicates, order kept, verify passes`,
    { timeout: 900_000 },
    async t => {
      await runFaultScenario(t, { name: 'rolling-restart', delivery, fault: rollingRestarts })
    }
  )
}
