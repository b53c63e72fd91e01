import { test } from 'node:test'
import { runFaultScenario } from './fault-scenario.js'
import { leaderElections } from './faults.js'

for (const delivery of ['at-least-once', 'exactly-once'] as const) {
  test(
    `${delivery}: preferred-leader elections moving every target leader twice, then every source leader, while records flow: 0 missing, 0 duplicates, order kept, verify passes`,
    { timeout: 600_000 },
    async t => {
      await runFaultScenario(t, { name: 'leader-elections', delivery, fault: leaderElections })
    }
  )
}
