import { NodeCluster } from '../scripts/local-kafka/node-cluster.js'

/** Nodes of each cluster of the rolling-restart scenario; topics there have 3 replicas, 2 in sync for an acks=all write. */
export const ROLLING_RESTART_NODES = 3

/** Base ports of the scenario's 3-node clusters when the environment names none. */
export const DEFAULT_NODES_SOURCE_PORT = 21092
export const DEFAULT_NODES_TARGET_PORT = 31092

export class NodePortError extends Error {
  override readonly name = 'NodePortError'
}

function basePort (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const port = Number(raw)
  // Node i listens on base + 10*i and base + 10*i + 1: the highest port of 3 nodes is base + 21.
  if (!Number.isInteger(port) || port < 1024 || port > 65535 - 21) {
    throw new NodePortError(`${name} "${raw}": expected a base port between 1024 and ${65535 - 21} (each cluster uses base + 0..21); set another or unset it for ${fallback}`)
  }
  return port
}

/**
 * Base ports of the two 3-node clusters: `KAFKA_BENCH_NODES_SOURCE_PORT` (default 21092) and
 * `KAFKA_BENCH_NODES_TARGET_PORT` (default 31092); each cluster uses base + 0..21.
 */
export function nodeClusterPorts (env: Readonly<Record<string, string | undefined>> = process.env): { source: number, target: number } {
  const ports = {
    source: basePort(env, 'KAFKA_BENCH_NODES_SOURCE_PORT', DEFAULT_NODES_SOURCE_PORT),
    target: basePort(env, 'KAFKA_BENCH_NODES_TARGET_PORT', DEFAULT_NODES_TARGET_PORT),
  }
  if (Math.abs(ports.source - ports.target) < 22) {
    throw new NodePortError(`KAFKA_BENCH_NODES_SOURCE_PORT ${ports.source} and KAFKA_BENCH_NODES_TARGET_PORT ${ports.target}: the clusters' port ranges (base + 0..21) overlap; set them at least 22 apart`)
  }
  return ports
}

/** The scenario's two clusters (folders `bench-source-3` and `bench-target-3` under the clusters home), not started. */
export function benchNodeClusters (env: Readonly<Record<string, string | undefined>> = process.env): { source: NodeCluster, target: NodeCluster } {
  const ports = nodeClusterPorts(env)
  return {
    source: new NodeCluster({ name: `bench-source-${ROLLING_RESTART_NODES}`, basePort: ports.source, nodes: ROLLING_RESTART_NODES }),
    target: new NodeCluster({ name: `bench-target-${ROLLING_RESTART_NODES}`, basePort: ports.target, nodes: ROLLING_RESTART_NODES }),
  }
}

/** One node's turn in a rolling restart, in seconds since the first node's stop. */
export interface NodeRestart {
  readonly nodeId: number
  /** SIGTERM sent (controlled shutdown: its leaderships move away first). */
  readonly stopSeconds: number
  /** The process gone. */
  readonly stoppedSeconds: number
  /** Started again on its data and registered as a broker. */
  readonly startedSeconds: number
  /** Every partition of the cluster with all its replicas in sync again. */
  readonly isrFullSeconds: number
}

/** What the restart of every node in turn did, on the `performance.now()` clock. */
export interface RollingRestart {
  readonly startedAtMs: number
  readonly endedAtMs: number
  readonly nodes: readonly NodeRestart[]
}

/**
 * Restarts every node of `cluster` in turn: SIGTERM and wait until the process is gone, start it
 * again on its data, wait until every partition has all its replicas in sync, then the next node.
 * Stops before the next node when `stopWaiting()` says so (the mirror exited).
 */
export async function restartNodesInTurn (
  cluster: NodeCluster,
  log: (line: string) => void,
  stopWaiting: () => boolean = () => false
): Promise<RollingRestart> {
  const startedAtMs = performance.now()
  const since = (): number => (performance.now() - startedAtMs) / 1000
  const nodes: NodeRestart[] = []
  for (const node of cluster.nodes) {
    if (stopWaiting()) break
    const stopSeconds = since()
    await node.stop()
    const stoppedSeconds = since()
    await cluster.startNode(node.nodeId)
    const startedSeconds = since()
    await cluster.waitUntilIsrFull()
    const isrFullSeconds = since()
    nodes.push({ nodeId: node.nodeId, stopSeconds, stoppedSeconds, startedSeconds, isrFullSeconds })
    log(
      `rolling restart: ${cluster.options.name} node ${node.nodeId} stopped in ${(stoppedSeconds - stopSeconds).toFixed(1)} s, started in ${(startedSeconds - stoppedSeconds).toFixed(1)} s, replicas in sync ${(isrFullSeconds - startedSeconds).toFixed(1)} s later`
    )
  }
  return { startedAtMs, endedAtMs: performance.now(), nodes }
}

/** One line for the results' setup notes. */
export function rollingRestartNote (ports: { source: number, target: number }, pollIntervalMs: number): string {
  return `Rolling restart: two ${ROLLING_RESTART_NODES}-node KRaft clusters (every node a broker and a controller voter, \`scripts/local-kafka/node-cluster.ts\`; base ports ${ports.source} and ${ports.target}, \`KAFKA_BENCH_NODES_SOURCE_PORT\` / \`KAFKA_BENCH_NODES_TARGET_PORT\`), topics with replication factor ${ROLLING_RESTART_NODES} and min.insync.replicas=2 (MirrorMaker 2's internal topics too). In every contender run (not the ceiling), at the first poll that saw a third of the records or more on the target, the target's nodes were restarted one by one: SIGTERM (controlled shutdown) and wait until the process was gone, start it again on its data, wait until every partition of the cluster had all its replicas in sync, next node. The benchmark polls the target's end offsets every ${pollIntervalMs} ms throughout (a poll to a stopping node may take longer: the *longest poll gap* column is the resolution of that run's stall). Times and rates include the restart; the *Rolling restart of the target* table gives the restart window, the longest stall and the catch-up after it.`
}
