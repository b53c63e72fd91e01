import { setTimeout as sleep } from 'node:timers/promises'
import type { KafkaEndpoint } from '../../scripts/local-kafka/clusters.js'
import { createKafkaClient } from '../../src/kafka/client.js'

/** A producer writing unique keys at a steady rate while a fault happens. */
export interface TrafficWriter {
  /** Records acknowledged so far. */
  readonly written: () => number
  /** Sends that failed and were sent again (each may have left a copy on the source: the audit reads the source, not this count). */
  readonly failedSends: () => number
  /** The last send error, for diagnostics. */
  readonly lastError: () => string | undefined
  /** Ends the writer after the send under way (a failing round is given up); resolves once its producer disconnected. */
  readonly stop: () => Promise<void>
}

export interface TrafficWriterOptions {
  /** Records per round; default 50. */
  readonly recordsPerRound?: number
  /** Pause between rounds, in ms; default 100 (some 500 records/s with the default round). */
  readonly pauseMs?: number
  /** Key prefix; keys are `<prefix><n>`, n counting from 0. */
  readonly keyPrefix?: string
}

/**
 * Writes keyed records (`w0`, `w1`, ...) to `topic` with acks=all and the idempotent producer,
 * partitioned by key over the partitions it knows (metadata refreshed every 2 s, so partitions
 * added to the topic get records). A send that fails (a broker restarting past kafkajs' retries)
 * is sent again with the same keys until it is acknowledged or the writer is stopped.
 */
export function startTrafficWriter (cluster: KafkaEndpoint, topic: string, options: TrafficWriterOptions = {}): TrafficWriter {
  const perRound = options.recordsPerRound ?? 50
  const pauseMs = options.pauseMs ?? 100
  const prefix = options.keyPrefix ?? 'w'
  const producer = createKafkaClient(cluster.connection('fault-writer')).producer({ idempotent: true, maxInFlightRequests: 1, metadataMaxAge: 2_000 })
  let written = 0
  let failedSends = 0
  let lastError: string | undefined
  let stopped = false
  const done = (async () => {
    await producer.connect()
    try {
      while (!stopped) {
        const messages = Array.from({ length: perRound }, (_, i) => ({ key: `${prefix}${written + i}`, value: `${written + i}:${'x'.repeat(60)}` }))
        let acknowledged = false
        while (!acknowledged && !stopped) {
          try {
            await producer.send({ topic, acks: -1, messages })
            acknowledged = true
          } catch (error) {
            failedSends++
            lastError = (error as Error).message
            await sleep(500)
          }
        }
        // A round still failing when stopped is not counted: its records may or may not be on the source.
        if (!acknowledged) break
        written += messages.length
        // A steady rate spread over the fault, not a wait for a condition.
        await sleep(pauseMs)
      }
    } finally {
      await producer.disconnect()
    }
  })()
  return {
    written: () => written,
    failedSends: () => failedSends,
    lastError: () => lastError,
    stop: async () => { stopped = true; await done },
  }
}
