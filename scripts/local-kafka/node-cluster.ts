import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Admin } from '@kafka-mirror-sidecar/kafkajs'
import { createKafkaClient } from '../../src/kafka/client.js'
import type { ClusterConnection } from '../../src/config/cluster-connection.js'
import { electPreferredLeaders, leaderCounts, moveLeaders, waitUntilIsrFull, type LeaderMove } from './cluster-leadership.js'
import { ensureKafkaDistribution, kafkaVersionFromEnv, LocalKafkaError, type KafkaDistribution } from './kafka-distribution.js'
import { KafkaNode, type NodeStatus } from './kafka-node.js'
import { portAnswers, randomClusterId } from './local-cluster.js'
import { formatStorage } from './storage-format.js'
import { clustersHome } from './paths.js'

/** A local KRaft cluster of several combined broker+controller nodes on 127.0.0.1. */
export interface NodeClusterOptions {
  /** Folder name under the clusters home and the name in status output. */
  readonly name: string
  /**
   * Base port P: node i (0-based) listens on P + 10*i (PLAINTEXT) and P + 10*i + 1 (CONTROLLER).
   */
  readonly basePort: number
  /** Number of nodes; default 3. Every node is a voter of the controller quorum. */
  readonly nodes?: number
  /** Kafka release; default `KAFKA_VERSION` or the pinned 4.x release. */
  readonly version?: string
  /** JVM heap of each node (-Xms/-Xmx); default `KAFKA_NODE_HEAP` or `384m`. */
  readonly heap?: string
  /** Extra or overriding broker properties for every node. */
  readonly brokerProperties?: Readonly<Record<string, string>>
  /** Extra or overriding broker properties of single nodes, by node id (1-based): `broker.rack` per node, say. */
  readonly nodeProperties?: Readonly<Record<number, Readonly<Record<string, string>>>>
  /** How long a start waits for each node to be a registered broker, in ms; default 120000. */
  readonly startTimeoutMs?: number
}

/** What `status()` reports of a multi-node cluster. */
export interface NodeClusterStatus {
  readonly name: string
  readonly bootstrap: string
  readonly nodes: readonly NodeStatus[]
  readonly dir: string
}

/** The file in a multi-node cluster's folder that names its options, so `clusters-cli` finds it. */
const MARKER = 'cluster.json'

/**
 * Replication defaults of a multi-node cluster: every topic, the group offsets and the transaction
 * log on three replicas, two of them in sync for an acks=all write.
 */
function replicationDefaults (nodes: number): Record<string, string> {
  const replicas = String(Math.min(3, nodes))
  const minIsr = String(Math.min(2, nodes))
  return {
    'default.replication.factor': replicas,
    'min.insync.replicas': minIsr,
    'offsets.topic.replication.factor': replicas,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
  }
}

/**
 * N KRaft nodes, each a broker and a controller voter, each with its own ports, data dir, log and
 * pid file (`<home>/<name>/node-<id>/`). `start()` reuses the nodes that run (starting those of
 * its nodes that stopped, on their data) or formats a new cluster; `stop()` ends every node and
 * removes the data. Leaders stay where they are put: `auto.leader.rebalance.enable` is false, so
 * only `electPreferredLeaders`/`moveLeaders` or a broker failure move them.
 */
export class NodeCluster {
  readonly options: NodeClusterOptions
  readonly dir: string
  readonly nodes: readonly KafkaNode[]

  constructor (options: NodeClusterOptions) {
    const count = options.nodes ?? 3
    if (!Number.isInteger(count) || count < 1 || count > 9) {
      throw new LocalKafkaError(`cluster "${options.name}": nodes ${String(options.nodes)}: expected a whole number from 1 to 9`)
    }
    this.options = options
    this.dir = join(clustersHome(), options.name)
    const heap = options.heap ?? process.env.KAFKA_NODE_HEAP ?? '384m'
    this.nodes = Array.from({ length: count }, (_, i) => new KafkaNode({
      clusterName: options.name,
      nodeId: i + 1,
      port: options.basePort + 10 * i,
      controllerPort: options.basePort + 10 * i + 1,
      dir: join(this.dir, `node-${i + 1}`),
      heap,
      startTimeoutMs: options.startTimeoutMs ?? 120_000,
    }))
  }

  /** Every node's listener, comma-separated (a `bootstrap.servers` value). */
  get bootstrap (): string { return this.nodes.map(n => n.bootstrap).join(',') }

  /** The node with KRaft `node.id` `nodeId` (1-based). */
  node (nodeId: number): KafkaNode {
    const node = this.nodes.find(n => n.nodeId === nodeId)
    if (node === undefined) throw new LocalKafkaError(`cluster "${this.options.name}" has no node ${nodeId} (nodes 1-${this.nodes.length})`)
    return node
  }

  /** A plaintext connection to every node of this cluster, for admin and test clients. */
  connection (clientId = `local-${this.options.name}`): ClusterConnection {
    return { alias: this.options.name, brokers: this.nodes.map(n => n.bootstrap), clientId, connectionTimeoutMs: 3_000, requestTimeoutMs: 15_000 }
  }

  async status (): Promise<NodeClusterStatus> {
    return { name: this.options.name, bootstrap: this.bootstrap, nodes: await Promise.all(this.nodes.map(n => n.status())), dir: this.dir }
  }

  /**
   * Starts the cluster: nodes that run are reused (thawed if frozen), nodes with data that stopped
   * are started on it, and a cluster without data is formatted anew. Resolves once every node is a
   * registered broker.
   */
  async start (): Promise<void> {
    const distribution = await this.distribution()
    const formatted = existsSync(join(this.dir, MARKER)) && this.nodes.every(n => existsSync(join(n.dataDir, 'meta.properties')))
    if (!formatted) await this.format(distribution)
    await Promise.all(this.nodes.map(n => n.thaw()))
    // Launched together: no node is ready before a majority of the controller quorum runs.
    for (const node of this.nodes) await node.launch(distribution)
    await Promise.all(this.nodes.map(n => n.waitReady()))
  }

  /** Starts node `nodeId` again on its data (after `stop()` or `kill()`) and waits until it is a registered broker. */
  async startNode (nodeId: number): Promise<void> {
    await this.node(nodeId).start(await this.distribution())
  }

  /** Ends every node (SIGTERM, SIGKILL after `graceMs`) and removes the cluster's folder. */
  async stop ({ graceMs = 10_000 } = {}): Promise<void> {
    await Promise.all(this.nodes.map(n => n.stop({ graceMs })))
    await rm(this.dir, { recursive: true, force: true })
  }

  /** Runs `fn` with a connected admin client of this cluster, then disconnects. */
  async withAdmin<T> (fn: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = createKafkaClient(this.connection(`local-${this.options.name}-admin`)).admin()
    await admin.connect()
    try {
      return await fn(admin)
    } finally {
      await admin.disconnect()
    }
  }

  /** Resolves once every partition of `topics` (default: every topic, internal ones included) has all its replicas in sync. */
  async waitUntilIsrFull (topics?: readonly string[], timeoutMs = 120_000): Promise<void> {
    await this.withAdmin(admin => waitUntilIsrFull(admin, this.options.name, topics, timeoutMs))
  }

  /** How many partitions of `topic` each node leads (nodes leading none included with 0). */
  async leaderCounts (topic: string): Promise<Map<number, number>> {
    const counts = await this.withAdmin(admin => leaderCounts(admin, topic))
    return new Map(this.nodes.map(n => [n.nodeId, counts.get(n.nodeId) ?? 0]))
  }

  /** The node leading most partitions of `topic` (the lowest id among equals). */
  async nodeLeadingMost (topic: string): Promise<KafkaNode> {
    const counts = [...await this.leaderCounts(topic)].sort((a, b) => b[1] - a[1] || a[0] - b[0])
    return this.node(counts[0]?.[0] ?? 1)
  }

  /** Preferred-leader election for every partition of `topic`, with Kafka's own `kafka-leader-election` tool. */
  async electPreferredLeaders (topic: string): Promise<void> {
    const partitions = await this.withAdmin(async admin => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length ?? 0)
    await electPreferredLeaders(await this.distribution(), this.bootstrap, topic, partitions, join(this.dir, 'elections'))
  }

  /**
   * Moves the leader of every partition of `topic` to another replica: a reassignment (admin API)
   * rotates each replica list so a replica other than the leader is preferred, then a
   * preferred-leader election moves the leaders there. Returns each partition's leader before and after.
   */
  async moveLeaders (topic: string, timeoutMs = 60_000): Promise<LeaderMove[]> {
    const distribution = await this.distribution()
    return await this.withAdmin(admin =>
      moveLeaders(admin, topic, timeoutMs, partitions => electPreferredLeaders(distribution, this.bootstrap, topic, partitions, join(this.dir, 'elections')))
    )
  }

  /**
   * Puts the cluster back to whole: frozen nodes thawed, stopped ones started on their data, every
   * partition's replicas in sync.
   */
  async heal (timeoutMs = 120_000): Promise<void> {
    const distribution = await this.distribution()
    await Promise.all(this.nodes.map(n => n.thaw()))
    for (const node of this.nodes) await node.launch(distribution)
    await Promise.all(this.nodes.map(n => n.waitReady()))
    await this.waitUntilIsrFull(undefined, timeoutMs)
  }

  private async distribution (): Promise<KafkaDistribution> {
    return await ensureKafkaDistribution(this.options.version ?? kafkaVersionFromEnv())
  }

  private async format (distribution: KafkaDistribution): Promise<void> {
    if (this.nodes.some(n => existsSync(join(n.dir, 'pid')))) await Promise.all(this.nodes.map(n => n.kill()))
    for (const node of this.nodes) {
      for (const port of [node.options.port, node.options.controllerPort]) {
        if (await portAnswers(port)) {
          throw new LocalKafkaError(`cluster "${this.options.name}": port ${port} on 127.0.0.1 is already in use by another process; stop it or choose another base port (docs/fault-suite.md: KAFKA_FAULT_SOURCE_PORT / KAFKA_FAULT_TARGET_PORT)`)
        }
      }
    }
    await rm(this.dir, { recursive: true, force: true })
    const clusterId = randomClusterId()
    for (const node of this.nodes) {
      await mkdir(node.dataDir, { recursive: true })
      await writeFile(node.propertiesFile, this.serverProperties(node))
      await formatStorage(
        distribution,
        node.propertiesFile,
        clusterId,
        join(node.dir, 'format-log4j.properties'),
        `cluster "${this.options.name}" node ${node.nodeId}`
      )
    }
    await writeFile(join(this.dir, MARKER), JSON.stringify({ name: this.options.name, basePort: this.options.basePort, nodes: this.nodes.length }) + '\n')
  }

  private serverProperties (node: KafkaNode): string {
    const voters = this.nodes.map(n => `${n.nodeId}@127.0.0.1:${n.options.controllerPort}`).join(',')
    const properties: Record<string, string> = {
      'process.roles': 'broker,controller',
      'node.id': String(node.nodeId),
      'controller.quorum.voters': voters,
      listeners: `PLAINTEXT://127.0.0.1:${node.options.port},CONTROLLER://127.0.0.1:${node.options.controllerPort}`,
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${node.options.port}`,
      'controller.listener.names': 'CONTROLLER',
      'inter.broker.listener.name': 'PLAINTEXT',
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'log.dirs': node.dataDir,
      'num.partitions': '1',
      ...replicationDefaults(this.nodes.length),
      'offsets.topic.num.partitions': '4',
      'transaction.state.log.num.partitions': '4',
      'group.initial.rebalance.delay.ms': '0',
      'log.flush.interval.messages': '9223372036854775807',
      'auto.create.topics.enable': 'false',
      'auto.leader.rebalance.enable': 'false',
      ...this.options.brokerProperties,
      ...this.options.nodeProperties?.[node.nodeId],
    }
    return Object.entries(properties).map(([key, value]) => `${key}=${value}`).join('\n') + '\n'
  }
}

/** The multi-node clusters that have a folder under the clusters home (found by their `cluster.json`). */
export async function nodeClustersOnDisk (): Promise<NodeCluster[]> {
  const home = clustersHome()
  if (!existsSync(home)) return []
  const found: NodeCluster[] = []
  for (const entry of await readdir(home, { withFileTypes: true })) {
    const marker = join(home, entry.name, MARKER)
    if (!entry.isDirectory() || !existsSync(marker)) continue
    const saved = JSON.parse(await readFile(marker, 'utf8')) as { name: string, basePort: number, nodes: number }
    found.push(new NodeCluster({ name: saved.name, basePort: saved.basePort, nodes: saved.nodes }))
  }
  return found
}
