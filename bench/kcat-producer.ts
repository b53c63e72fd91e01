import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Compression } from './bench-options.js'
import { track, type TrackedChild } from './child-registry.js'

/** What the records look like: keys are the record number in hex, values random base64 text. */
export interface RecordShape {
  readonly keyBytes: number
  readonly valueBytes: number
  /** Keys repeat after this many records (record number modulo it), for a compacted source; default every key once. */
  readonly distinctKeys?: number
  /** Values are the record number zero-padded to the value size (they compress about 100x), not random text. */
  readonly compressibleValues?: boolean
}

export interface KcatProducerOptions {
  readonly bootstrap: string
  readonly topic: string
  readonly compression: Compression
  /** librdkafka `linger.ms`: large for the preload, small for the latency mode. */
  readonly lingerMs: number
}

/**
 * `kcat -P` reading `key<TAB>value` lines from stdin (librdkafka is far faster than a kafkajs
 * producer on this machine, and Kafka's ProducerPerformance cannot send keys).
 */
function startKcat (options: KcatProducerOptions): TrackedChild {
  const child = spawn('kcat', [
    '-P', '-b', options.bootstrap, '-t', options.topic, '-K', '\t', '-z', options.compression,
    '-X', 'acks=all', '-X', `linger.ms=${options.lingerMs}`, '-X', 'batch.size=1000000',
    '-X', 'queue.buffering.max.messages=500000', '-X', 'queue.buffering.max.kbytes=1048576',
  ], { stdio: ['pipe', 'ignore', 'pipe'] })
  return track('kcat producer', child)
}

/** Builds `count` lines starting at record number `first`. */
export function recordLines (shape: RecordShape, first: number, count: number): string {
  if (shape.compressibleValues === true) {
    const lines: string[] = []
    for (let i = 0; i < count; i++) {
      const number = first + i
      lines.push(number.toString(16).padStart(shape.keyBytes, '0').slice(-shape.keyBytes) + '\t' + String(number).padStart(shape.valueBytes, '0'))
    }
    return lines.join('\n') + '\n'
  }
  const randomText = randomBytes(Math.ceil(shape.valueBytes * count * 3 / 4) + 3).toString('base64')
  const lines: string[] = []
  for (let i = 0; i < count; i++) {
    const number = shape.distinctKeys === undefined ? first + i : (first + i) % shape.distinctKeys
    const key = number.toString(16).padStart(shape.keyBytes, '0').slice(-shape.keyBytes)
    lines.push(key + '\t' + randomText.slice(i * shape.valueBytes, (i + 1) * shape.valueBytes))
  }
  return lines.join('\n') + '\n'
}

async function finish (producer: TrackedChild, stderr: () => string): Promise<void> {
  producer.child.stdin?.end()
  const { code } = await producer.exited
  if (code !== 0) throw new Error(`kcat producer exited with ${code}: ${stderr().trim().split('\n').slice(-5).join('\n')}`)
}

function collectStderr (producer: TrackedChild): () => string {
  let text = ''
  producer.child.stderr?.on('data', (chunk: Buffer) => { text = (text + chunk.toString()).slice(-10_000) })
  return () => text
}

async function write (producer: TrackedChild, text: string): Promise<void> {
  const stdin = producer.child.stdin
  if (stdin === null) throw new Error('kcat producer has no stdin')
  if (!stdin.write(text)) {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(error)
      stdin.once('error', onError)
      stdin.once('drain', () => { stdin.off('error', onError); resolve() })
    })
  }
}

/** Writes `records` records as fast as kcat takes them and waits for every acknowledgement. */
export async function preload (options: KcatProducerOptions, shape: RecordShape, records: number): Promise<void> {
  const producer = startKcat(options)
  const stderr = collectStderr(producer)
  const chunk = 2_000
  for (let first = 0; first < records; first += chunk) {
    await write(producer, recordLines(shape, first, Math.min(chunk, records - first)))
  }
  await finish(producer, stderr)
}

/** A lead-in at the same rate before the measured phase, on the same producer and topic. */
export interface RateWarmUp {
  readonly durationMs: number
  /**
   * Called once, before the first record of the measured phase is written, with its record
   * number and the time (epoch ms): records from that number on are the measured ones.
   */
  readonly onMeasuredPhase: (firstRecord: number, atMs: number) => void
}

/**
 * Produces at `ratePerSecond` for `durationMs` (catching up if a tick was late, never bursting
 * ahead), after `warmUp.durationMs` at the same rate when given (one producer, no gap between
 * the two); returns how many records of the measured phase were sent and when that phase
 * started (epoch ms).
 */
export async function produceAtRate (
  options: KcatProducerOptions,
  shape: RecordShape,
  ratePerSecond: number,
  durationMs: number,
  firstRecord = 0,
  warmUp?: RateWarmUp
): Promise<{ records: number, startedAtMs: number }> {
  const producer = startKcat(options)
  const stderr = collectStderr(producer)
  const tickMs = 10
  const warmUpRecords = warmUp === undefined ? 0 : Math.round((ratePerSecond * warmUp.durationMs) / 1000)
  const total = warmUpRecords + Math.round((ratePerSecond * durationMs) / 1000)
  const producingSinceMs = Date.now()
  let startedAtMs = producingSinceMs
  let sent = 0
  let measuring = warmUp === undefined
  const writeUpTo = async (due: number): Promise<void> => {
    if (due > sent) await write(producer, recordLines(shape, firstRecord + sent, due - sent))
    sent = Math.max(sent, due)
  }
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - producingSinceMs) * ratePerSecond) / 1000))
    if (!measuring && due >= warmUpRecords) {
      await writeUpTo(warmUpRecords)
      startedAtMs = Date.now()
      measuring = true
      warmUp?.onMeasuredPhase(firstRecord + warmUpRecords, startedAtMs)
    }
    await writeUpTo(due)
    await sleep(tickMs)
  }
  await finish(producer, stderr)
  return { records: total - warmUpRecords, startedAtMs }
}

/** A kcat producer writing at a fixed rate until stopped. */
export interface RateProducer {
  /** Records handed to kcat so far (the first is record number 0). */
  readonly sent: () => number
  /** Stops writing, waits for every acknowledgement; resolves to the records written. */
  readonly stop: () => Promise<number>
}

/**
 * Produces at `ratePerSecond` from record number 0 until stopped (catching up if a tick was late,
 * never bursting ahead); kcat exits with an error when a record could not be delivered.
 */
export function startRateProducer (options: KcatProducerOptions, shape: RecordShape, ratePerSecond: number): RateProducer {
  const producer = startKcat(options)
  const stderr = collectStderr(producer)
  const startedMs = Date.now()
  let sent = 0
  let stopping = false
  const done = (async () => {
    while (!stopping) {
      const due = Math.floor(((Date.now() - startedMs) * ratePerSecond) / 1000)
      if (due > sent) {
        await write(producer, recordLines(shape, sent, due - sent))
        sent = due
      }
      await sleep(10)
    }
    await finish(producer, stderr)
  })()
  // Handled where it is awaited (stop); without this a kcat that dies before stop() would end the benchmark unreported.
  done.catch(() => undefined)
  return { sent: () => sent, stop: async () => { stopping = true; await done; return sent } }
}
