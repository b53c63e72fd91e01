import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { parse: parseProduceResponse } = require('@kafka-mirror-sidecar/kafkajs/src/protocol/requests/produce/v3/response') as {
  parse: (data: ProduceAnswer) => Promise<ProduceAnswer>
}
const { KafkaJSBrokerNotFound } = require('@kafka-mirror-sidecar/kafkajs/src/errors') as { KafkaJSBrokerNotFound: new (message: string) => Error }

/** Kafka's error codes the fake answers with. */
export const ErrorCode = {
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  MESSAGE_TOO_LARGE: 10,
  NOT_ENOUGH_REPLICAS: 19,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
} as const

export interface ProduceEntry { partition: number, firstSequence?: number, messages: Array<{ value: string | Buffer }> }
export interface ProduceRequest { producerId: number, producerEpoch: number, topicData: Array<{ topic: string, partitions: ProduceEntry[] }> }
interface PartitionAnswer { partition: number, errorCode: number, baseOffset: string, logAppendTime: string, logStartOffset: string }
interface ProduceAnswer { topics: Array<{ topicName: string, partitions: PartitionAnswer[] }>, throttleTime: number }

/** A batch the partition's log holds for a producer: enough to recognise a resend (Kafka keeps 5). */
interface WrittenBatch { firstSequence: number, lastSequence: number, baseOffset: number }

/** What a test does to a request as a broker receives it: delay it, change the cluster, throw. */
export type RequestHook = (nodeId: number, request: ProduceRequest) => Promise<void> | void

/**
 * Target brokers faked to Kafka's idempotence rules (KIP-98), behind kafkajs' own cluster and
 * broker interfaces: a partition's log is one (replicated) log whoever leads it; per producer id it
 * accepts a batch whose first sequence is the last one + 1, answers a resend of one of its last 5
 * batches with that batch's original offset, and refuses anything else with
 * OUT_OF_ORDER_SEQUENCE_NUMBER. A broker answers NOT_LEADER_OR_FOLLOWER for partitions it does not
 * lead. The producer's metadata is a copy of the leaders taken at each `refreshMetadata`.
 */
export class IdempotentBrokers {
  /** The values each partition's log holds, in offset order (key `topic-partition`). */
  readonly logs = new Map<string, string[]>()
  readonly #batches = new Map<string, Map<number, WrittenBatch[]>>()
  /** The truth: the leader of each partition of each topic. */
  readonly leaders = new Map<string, number[]>()
  #metadata = new Map<string, number[]>()
  /** Requests each broker received. */
  readonly requests: Array<{ nodeId: number, request: ProduceRequest }> = []
  /** Partitions a request named while an earlier request for them was still unanswered. */
  readonly sentWhileInFlight: string[] = []
  readonly #inFlight = new Set<string>()
  metadataRefreshes = 0
  /** Runs as a broker receives a request, before it writes anything. */
  beforeWrite: RequestHook | undefined
  /** Runs after a broker wrote a request, before it answers (throw: the answer is lost). */
  afterWrite: RequestHook | undefined
  /** A partition's own answer before the idempotence check (a refusal such as NOT_ENOUGH_REPLICAS). */
  refuse: ((nodeId: number, topic: string, entry: ProduceEntry) => number | undefined) | undefined

  constructor (topics: Record<string, number[]>) {
    for (const [topic, leaders] of Object.entries(topics)) this.leaders.set(topic, [...leaders])
    this.#refresh()
  }

  log (topic: string, partition: number): string[] {
    return this.logs.get(`${topic}-${partition}`) ?? []
  }

  /** kafkajs' Cluster, as sendMessages and the idempotent eosManager use it. */
  cluster (): object {
    const brokers = new Map([...new Set([...this.leaders.values()].flat())].map(nodeId => [nodeId, this.#broker(nodeId)]))
    const partitionMetadata = (topic: string): Array<{ partitionId: number, leader: number }> =>
      (this.#metadata.get(topic) ?? []).map((leader, partitionId) => ({ partitionId, leader }))
    return {
      retry: { retries: 0 },
      targetTopics: new Set<string>(),
      isConnected: () => true,
      connect: async () => {},
      removeBroker: () => {},
      addMultipleTargetTopics: async () => {},
      refreshMetadataIfNecessary: async () => {},
      refreshMetadata: async () => { this.#refresh() },
      findTopicPartitionMetadata: partitionMetadata,
      // kafkajs 2.2.4's own lookup (a partition its metadata does not list is left out).
      findLeaderForPartitions: (topic: string, partitions: Array<string | number>) => {
        const result: Record<number, number[]> = {}
        for (const id of partitions) {
          const leader = partitionMetadata(topic).find(p => p.partitionId === Number(id))?.leader
          if (leader !== undefined) (result[leader] ??= []).push(Number(id))
        }
        return result
      },
      findBroker: async ({ nodeId }: { nodeId: number }) => {
        const broker = brokers.get(Number(nodeId))
        if (broker === undefined) throw new KafkaJSBrokerNotFound(`broker ${nodeId} not found`)
        return broker
      },
      findControllerBroker: async () => [...brokers.values()][0],
    }
  }

  #refresh (): void {
    this.metadataRefreshes++
    this.#metadata = new Map([...this.leaders].map(([topic, leaders]) => [topic, [...leaders]]))
  }

  #broker (nodeId: number): object {
    return {
      nodeId,
      initProducerId: async () => ({ producerId: 1000, producerEpoch: 0 }),
      produce: async (request: ProduceRequest) => {
        this.requests.push({ nodeId, request })
        const keys = request.topicData.flatMap(({ topic, partitions }) => partitions.map(p => `${topic}-${p.partition}`))
        for (const key of keys) {
          if (this.#inFlight.has(key)) this.sentWhileInFlight.push(key)
          this.#inFlight.add(key)
        }
        try {
          await this.beforeWrite?.(nodeId, request)
          const answer: ProduceAnswer = {
            topics: request.topicData.map(({ topic, partitions }) => ({
              topicName: topic,
              partitions: partitions.map(entry => this.#write(nodeId, topic, request.producerId, entry)),
            })),
            throttleTime: 0,
          }
          await this.afterWrite?.(nodeId, request)
          // kafkajs' own parse of the answer (the real broker layer runs it on every response).
          return await parseProduceResponse(answer)
        } finally {
          for (const key of keys) this.#inFlight.delete(key)
        }
      },
    }
  }

  #write (nodeId: number, topic: string, producerId: number, entry: ProduceEntry): PartitionAnswer {
    const answer = (errorCode: number, baseOffset = -1): PartitionAnswer => ({
      partition: entry.partition,
      errorCode,
      baseOffset: String(baseOffset),
      logAppendTime: '-1',
      logStartOffset: '0',
    })
    const leaders = this.leaders.get(topic) ?? []
    if (entry.partition >= leaders.length) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if (leaders[entry.partition] !== nodeId) return answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    const refused = this.refuse?.(nodeId, topic, entry)
    if (refused !== undefined) return answer(refused)
    const key = `${topic}-${entry.partition}`
    const log = this.logs.get(key) ?? []
    this.logs.set(key, log)
    const perProducer = this.#batches.get(key) ?? new Map<number, WrittenBatch[]>()
    this.#batches.set(key, perProducer)
    const batches = perProducer.get(producerId) ?? []
    perProducer.set(producerId, batches)
    const firstSequence = entry.firstSequence ?? 0
    const lastSequence = firstSequence + entry.messages.length - 1
    const duplicate = batches.find(b => b.firstSequence === firstSequence && b.lastSequence === lastSequence)
    if (duplicate !== undefined) return answer(ErrorCode.NONE, duplicate.baseOffset)
    const expected = (batches[batches.length - 1]?.lastSequence ?? -1) + 1
    if (firstSequence !== expected) return answer(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    const baseOffset = log.length
    for (const message of entry.messages) log.push(String(message.value))
    batches.push({ firstSequence, lastSequence, baseOffset })
    if (batches.length > 5) batches.shift()
    return answer(ErrorCode.NONE, baseOffset)
  }
}
