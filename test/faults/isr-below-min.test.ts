import { test } from 'node:test'
import { runFaultScenario } from './fault-scenario.js'
import { isrBelowMinimum, replicasLeadingOnOneAndTwo } from './faults.js'

for (const delivery of ['at-least-once', 'exactly-once'] as const) {
  test(
    `${delivery}: the target topic's ISR below min.insync.replicas for 20 s (a follower of every partition stopped, NOT_ENOUGH_REPLICAS, no leader moved), then recovered: 0 missing, 0 duplicates, order kept, verify passes`,
    { timeout: 600_000 },
    async t => {
      await runFaultScenario(t, {
        name: 'isr-below-min',
        delivery,
        fault: isrBelowMinimum,
        targetTopicConfigs: { 'min.insync.replicas': '3' },
        targetTopicReplicas: replicasLeadingOnOneAndTwo,
      })
    }
  )
}
