import { LocalKafkaError } from './kafka-distribution.js'
import { LocalCluster } from './local-cluster.js'

export { LocalCluster, portAnswers, freePortPair } from './local-cluster.js'
export type { LocalClusterOptions, ExtraListener, ClusterStatus } from './local-cluster.js'
export { ensureKafkaDistribution, DEFAULT_KAFKA_VERSION, MIRROR_MAKER_1_VERSION, LocalKafkaError } from './kafka-distribution.js'

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

export async function clustersDown (): Promise<void> {
  const { source, target } = defaultClusters()
  await Promise.all([source.stop(), target.stop()])
}
