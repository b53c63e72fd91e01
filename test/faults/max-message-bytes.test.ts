import { test } from 'node:test'
import { runFaultScenario } from './fault-scenario.js'
import { leaderElections } from './faults.js'

// A target topic that takes at most 1,024 bytes per record batch, below what one source batch or
// one request of the mirror holds: every write is cut to fit (the batches the target refuses are
// written in halves) while leaders move, through the decoding path and through pass-through
// (forwarded batches and their joins refused, then decoded).
for (const path of [['decoded', ['--pass.through', 'off']], ['forwarded', []]] as const) {
  for (const delivery of ['at-least-once', 'exactly-once'] as const) {
    test(
      `${delivery}, ${path[0]}: a target topic with max.message.bytes 1024 while leaders move: 0 missing, 0 duplicates, order kept, verify passes`,
      { timeout: 600_000 },
      async t => {
        await runFaultScenario(t, {
          name: `max-message-bytes-${path[0]}`,
          delivery,
          fault: leaderElections,
          targetTopicConfigs: { 'max.message.bytes': '1024' },
          sidecarArgs: path[1],
        })
      }
    )
  }
}
