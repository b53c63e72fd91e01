import type { ClusterConnection } from '../../src/config/cluster-connection.js'
import { LocalKafkaError } from './kafka-distribution.js'
import { LocalCluster } from './local-cluster.js'
import { NodeCluster, nodeClustersOnDisk } from './node-cluster.js'

export { LocalCluster, portAnswers, freePortPair } from './local-cluster.js'
export type { LocalClusterOptions, ExtraListener, ClusterStatus } from './local-cluster.js'
export { NodeCluster, nodeClustersOnDisk } from './node-cluster.js'
export type { NodeClusterOptions, NodeClusterStatus } from './node-cluster.js'
export { KafkaNode } from './kafka-node.js'
export type { NodeStatus } from './kafka-node.js'
export type { LeaderMove } from './cluster-leadership.js'
export { ensureKafkaDistribution, DEFAULT_KAFKA_VERSION, MIRROR_MAKER_1_VERSION, mirrorMaker2VersionFromEnv, LocalKafkaError } from './kafka-distribution.js'

/** What test clients need of a local cluster, single-node (`LocalCluster`) or not (`NodeCluster`). */
export interface KafkaEndpoint {
  /** `bootstrap.servers` value: host:port, comma-separated for several nodes. */
  readonly bootstrap: string
  connection (clientId?: string): ClusterConnection
}

function portFromEnv (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 1024 || port > 65534) {
    throw new LocalKafkaError(`${name} "${raw}": expected a port number between 1024 and 65534 (the controller uses port + 1)`)
  }
  return port
}

/** The two clusters the demo, the tests and the benchmark share: `source` (19092) and `target` (29092). */
export function defaultClusters (): { source: LocalCluster, target: LocalCluster } {
  return {
    source: new LocalCluster({ name: 'source', port: portFromEnv('KAFKA_SOURCE_PORT', 19092) }),
    target: new LocalCluster({ name: 'target', port: portFromEnv('KAFKA_TARGET_PORT', 29092) }),
  }
}

/** Starts both default clusters (reusing running ones), in parallel. */
export async function clustersUp (): Promise<{ source: LocalCluster, target: LocalCluster }> {
  const clusters = defaultClusters()
  // The first start may fetch the jars: do it once before two brokers race for the cache.
  await clusters.source.start()
  await clusters.target.start()
  return clusters
}

/**
 * The default clusters with `brokers` nodes each (`NodeCluster`, folders `source-<n>` and
 * `target-<n>`): node i at KAFKA_SOURCE_PORT / KAFKA_TARGET_PORT + 10*i, controller one above.
 */
export function defaultNodeClusters (brokers: number): { source: NodeCluster, target: NodeCluster } {
  return {
    source: new NodeCluster({ name: `source-${brokers}`, basePort: portFromEnv('KAFKA_SOURCE_PORT', 19092), nodes: brokers }),
    target: new NodeCluster({ name: `target-${brokers}`, basePort: portFromEnv('KAFKA_TARGET_PORT', 29092), nodes: brokers }),
  }
}

/** Starts both default multi-node clusters (reusing running nodes), one after the other. */
export async function nodeClustersUp (brokers: number): Promise<{ source: NodeCluster, target: NodeCluster }> {
  const clusters = defaultNodeClusters(brokers)
  await clusters.source.start()
  await clusters.target.start()
  return clusters
}

/** Stops the default clusters and every multi-node cluster under the clusters home, and removes their data. */
export async function clustersDown (): Promise<void> {
  const { source, target } = defaultClusters()
  await Promise.all([source.stop(), target.stop(), ...(await nodeClustersOnDisk()).map(c => c.stop())])
}
