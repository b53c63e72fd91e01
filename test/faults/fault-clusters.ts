import { LocalKafkaError, NodeCluster } from '../../scripts/local-kafka/clusters.js'

/** Base port of the fault suite's source cluster: `KAFKA_FAULT_SOURCE_PORT`, default 19192 (nodes at +0, +10, +20; controllers one above). */
export const DEFAULT_FAULT_SOURCE_PORT = 19192
/** Base port of the fault suite's target cluster: `KAFKA_FAULT_TARGET_PORT`, default 29192. */
export const DEFAULT_FAULT_TARGET_PORT = 29192

function basePortFromEnv (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 1024 || port > 65500) {
    throw new LocalKafkaError(`${name} "${raw}": expected a base port between 1024 and 65500 (node i listens on port + 10*i and its controller on port + 10*i + 1)`)
  }
  return port
}

/**
 * Base port of the fault suite's third 3-node cluster (racks, in the wire fetcher's replica test):
 * 300 above the fault source cluster's, so it starts while the suite's two clusters still run.
 */
export function faultRacksBasePort (): number {
  return basePortFromEnv('KAFKA_FAULT_SOURCE_PORT', DEFAULT_FAULT_SOURCE_PORT) + 300
}

/** The fault suite's two 3-node clusters (`faults-source`, `faults-target`), not started. */
export function faultClusters (): { source: NodeCluster, target: NodeCluster } {
  return {
    source: new NodeCluster({ name: 'faults-source', basePort: basePortFromEnv('KAFKA_FAULT_SOURCE_PORT', DEFAULT_FAULT_SOURCE_PORT), nodes: 3 }),
    target: new NodeCluster({ name: 'faults-target', basePort: basePortFromEnv('KAFKA_FAULT_TARGET_PORT', DEFAULT_FAULT_TARGET_PORT), nodes: 3 }),
  }
}

/**
 * Both fault clusters running whole: started (or reused from an earlier test file), every node
 * thawed and running, every partition's replicas in sync.
 */
export async function wholeFaultClusters (): Promise<{ source: NodeCluster, target: NodeCluster }> {
  const clusters = faultClusters()
  await clusters.source.start()
  await clusters.target.start()
  await Promise.all([clusters.source.heal(), clusters.target.heal()])
  return clusters
}
