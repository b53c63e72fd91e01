import type { NodeCluster } from '../../scripts/local-kafka/clusters.js'
import { waitUntil } from '../helpers/wait.js'
import type { FaultContext } from './fault-scenario.js'

/** Every node of `cluster` in turn: SIGTERM (controlled shutdown), started again on its data, replicas in sync, next. */
async function rollingRestart (context: FaultContext, cluster: NodeCluster): Promise<void> {
  for (const node of cluster.nodes) {
    await node.stop()
    context.note(`${cluster.options.name} node ${node.nodeId} stopped`)
    await cluster.startNode(node.nodeId)
    await cluster.waitUntilIsrFull()
    context.note(`${cluster.options.name} node ${node.nodeId} back, replicas in sync`)
  }
}

/** A rolling restart of every target broker, then of every source broker. */
export async function rollingRestarts (context: FaultContext): Promise<void> {
  await rollingRestart(context, context.target)
  await context.copiedMore(500)
  await rollingRestart(context, context.source)
}

/** kill -9 of the node leading most of `cluster`'s partitions of the topic; started again once its leaderships moved and records flowed on. */
async function killLeader (context: FaultContext, cluster: NodeCluster): Promise<void> {
  const node = await cluster.nodeLeadingMost(context.topic)
  const led = (await cluster.leaderCounts(context.topic)).get(node.nodeId) ?? 0
  await node.kill()
  context.note(`${cluster.options.name} node ${node.nodeId} (leading ${led} partitions) killed -9`)
  await waitUntil(async () => ((await cluster.leaderCounts(context.topic)).get(node.nodeId) ?? 0) === 0, {
    timeoutMs: 60_000,
    message: `the leaderships of killed node ${node.nodeId} to move`,
  })
  context.note('its leaderships moved')
  await context.copiedMore(1_000)
  await cluster.startNode(node.nodeId)
  await cluster.waitUntilIsrFull()
  context.note(`node ${node.nodeId} back, replicas in sync`)
}

export async function killTargetLeader (context: FaultContext): Promise<void> {
  await killLeader(context, context.target)
}

export async function killSourceLeader (context: FaultContext): Promise<void> {
  await killLeader(context, context.source)
}

/** Leaders of every target partition moved twice, then of every source partition once, each followed by records flowing. */
export async function leaderElections (context: FaultContext): Promise<void> {
  for (const [cluster, rounds] of [[context.target, 2], [context.source, 1]] as const) {
    for (let round = 0; round < rounds; round++) {
      const moves = await cluster.moveLeaders(context.topic)
      context.note(`${cluster.options.name}: preferred-leader election moved ${moves.filter(m => m.before !== m.after).length} of ${moves.length} leaders`)
      await context.copiedMore(500)
    }
  }
}

/** Target replicas of the ISR scenario's topic: nodes 1 and 2 lead in turn, node 3 (the one stopped) is never a leader. */
export function replicasLeadingOnOneAndTwo (partition: number): number[] {
  return partition % 2 === 0 ? [1, 2, 3] : [2, 1, 3]
}

/**
 * The target topic's in-sync replicas below its min.insync.replicas for 20 s: the topic asks for
 * 3 in sync (NOT_ENOUGH_REPLICAS for acks=all writes) and node 3, a follower of every partition
 * (`replicasLeadingOnOneAndTwo`), is stopped, so no leader of the topic moves; then started again.
 * One follower, not two: every node is a controller voter, and two of three stopped would stop the
 * quorum (the ISR could not shrink and writes would time out instead).
 */
export async function isrBelowMinimum (context: FaultContext): Promise<void> {
  const node = context.target.node(3)
  const led = (await context.target.leaderCounts(context.topic)).get(3) ?? 0
  const loggedBefore = context.sidecar.stderr().split('NOT_ENOUGH_REPLICAS').length
  await node.stop()
  const since = Date.now()
  context.note(`target node 3 (leading ${led} partitions of the topic) stopped: ISR 2 < min.insync.replicas 3`)
  await waitUntil(() => context.sidecar.stderr().split('NOT_ENOUGH_REPLICAS').length > loggedBefore || context.sidecar.child.exitCode !== null, {
    timeoutMs: 30_000,
    message: 'the sidecar to meet NOT_ENOUGH_REPLICAS',
  }).then(
    () => context.note('the sidecar met NOT_ENOUGH_REPLICAS'),
    () => context.note('the sidecar logged no NOT_ENOUGH_REPLICAS within 30 s')
  )
  await waitUntil(() => Date.now() - since >= 20_000 || context.sidecar.child.exitCode !== null, {
    timeoutMs: 30_000,
    intervalMs: 500,
    message: 'twenty seconds below min.insync.replicas',
  })
  await context.target.startNode(3)
  await context.target.waitUntilIsrFull()
  context.note('target node 3 back, replicas in sync')
}

/** Partitions of the mirrored source topic doubled under traffic (12 -> 24). */
export async function partitionsAdded (context: FaultContext): Promise<void> {
  const before = (await context.source.withAdmin(admin => admin.fetchTopicMetadata({ topics: [context.topic] }))).topics[0]?.partitions.length ?? 0
  await context.source.withAdmin(admin => admin.createPartitions({ topicPartitions: [{ topic: context.topic, count: before * 2 }] }))
  context.note(`source partitions ${before} -> ${before * 2}`)
  await waitUntil(
    async () =>
      ((await context.target.withAdmin(admin => admin.fetchTopicMetadata({ topics: [context.topic] }))).topics[0]?.partitions.length ?? 0) === before * 2,
    { timeoutMs: 120_000, message: 'the target topic to get the added partitions' }
  ).then(
    () => context.note('target topic has the added partitions'),
    () => context.note('target topic did NOT get the added partitions within 120 s')
  )
}
