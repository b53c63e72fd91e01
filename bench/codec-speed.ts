#!/usr/bin/env node
/*
 * Micro benchmark of the deep path's codecs and CRC-32C: JavaScript against native, on record sets
 * as kafkajs encodes them (records of 512-byte values, 256 KiB per batch). No Kafka involved.
 *
 *   npm run bench:codecs                   # 3 rounds of about 0.5 s per measurement
 *   npm run bench:codecs -- --rounds 5 --seconds 1
 *
 * For each codec and payload: MB/s of uncompressed record bytes, one batch at a time (the next
 * starts when the previous one settled, as kafkajs awaits each), and process CPU per batch (all
 * threads: the native codecs run on libuv's thread pool). Medians of the rounds.
 */
import { randomBytes } from 'node:crypto'
import { cpus, loadavg } from 'node:os'
import { gunzip, gzip } from 'node:zlib'
import { promisify } from 'node:util'
import { type KafkaCodec, loadLz4Codec, loadSnappyCodec, loadZstdCodec, lz4JsCodec, snappyJsCodec, zstdJsCodec } from '../src/kafka/codecs.js'
import { crc32c, crc32cImplementation, crc32cJs } from '../src/kafka/crc32c.js'
import { kafkajsRecordCodec } from '../src/kafka/kafkajs-internals.js'

const BATCH_BYTES = 256 * 1024
const VALUE_BYTES = 512

interface Options { rounds: number, seconds: number }

function parseArgs (argv: string[]): Options {
  const options: Options = { rounds: 3, seconds: 0.5 }
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]]
    const number = Number(value)
    if ((flag !== '--rounds' && flag !== '--seconds') || !(number > 0)) {
      process.stderr.write(`codec-speed: ${flag ?? ''} "${value ?? ''}": expected --rounds <n> or --seconds <s>, positive\n`)
      process.exit(2)
    }
    if (flag === '--rounds') options.rounds = Math.ceil(number)
    else options.seconds = number
  }
  return options
}

/** Values as `npm run bench` writes them (random base64 text), or JSON events that compress about 5x. */
type Payload = 'base64' | 'json'

function value (payload: Payload, i: number): Buffer {
  if (payload === 'base64') return Buffer.from(randomBytes(VALUE_BYTES).toString('base64').slice(0, VALUE_BYTES))
  const event = JSON.stringify({
    id: i,
    type: 'order.created',
    customer: `customer-${i % 997}`,
    amountCents: (i * 7919) % 100_000,
    currency: 'EUR',
    items: [{ sku: `sku-${i % 31}`, quantity: 1 + (i % 3) }],
    note: randomBytes(24).toString('hex'),
  })
  return Buffer.from(event.padEnd(VALUE_BYTES, ' ').slice(0, VALUE_BYTES))
}

/** One batch's record set as kafkajs' encoder hands it to a codec: length-prefixed v2 records, keys the record number in hex. */
function recordSet (payload: Payload): Buffer {
  const { encodeRecord } = kafkajsRecordCodec()
  const records: Buffer[] = []
  let bytes = 0
  for (let i = 0; bytes < BATCH_BYTES; i++) {
    const record = encodeRecord({ key: Buffer.from(i.toString(16).padStart(16, '0')), value: value(payload, i), headers: [] })
    records.push(record)
    bytes += record.length
  }
  return Buffer.concat(records)
}

interface Figure { mbPerSecond: number, cpuMicrosPerBatch: number }

async function measure (seconds: number, bytesPerCall: number, call: () => unknown): Promise<Figure> {
  for (let i = 0; i < 20; i++) await call()
  const cpuStart = process.cpuUsage()
  const start = process.hrtime.bigint()
  const deadline = start + BigInt(Math.round(seconds * 1e9))
  let calls = 0
  let now = start
  while (now < deadline) {
    for (let i = 0; i < 10; i++) await call()
    calls += 10
    now = process.hrtime.bigint()
  }
  const cpu = process.cpuUsage(cpuStart)
  const elapsedSeconds = Number(now - start) / 1e9
  return { mbPerSecond: bytesPerCall * calls / elapsedSeconds / 1e6, cpuMicrosPerBatch: (cpu.user + cpu.system) / calls * (BATCH_BYTES / bytesPerCall) }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function medianOf (options: Options, bytesPerCall: number, call: () => unknown): Promise<Figure> {
  const figures: Figure[] = []
  for (let round = 0; round < options.rounds; round++) figures.push(await measure(options.seconds, bytesPerCall, call))
  return { mbPerSecond: median(figures.map(f => f.mbPerSecond)), cpuMicrosPerBatch: median(figures.map(f => f.cpuMicrosPerBatch)) }
}

const gzipAsync = promisify(gzip)
const gunzipAsync = promisify(gunzip)
const gzipCodec: KafkaCodec = { compress: async encoder => await gzipAsync(encoder.buffer), decompress: async buffer => await gunzipAsync(buffer) }

const row = (cells: Array<string | number>): string => `| ${cells.join(' | ')} |`
const fixed = (n: number): string => n >= 100 ? n.toFixed(0) : n.toFixed(1)

async function main (): Promise<void> {
  const options = parseArgs(process.argv.slice(2))
  const codecs: Array<{ name: string, js: KafkaCodec, native?: { codec: KafkaCodec, implementation: string } }> = [
    { name: 'lz4', js: lz4JsCodec(), native: loadLz4Codec() },
    { name: 'snappy', js: snappyJsCodec(), native: loadSnappyCodec() },
    { name: 'zstd', js: zstdJsCodec, native: loadZstdCodec() },
    { name: 'gzip (node:zlib, kept)', js: gzipCodec },
  ]
  const lines: string[] = [
    `Node ${process.version}, ${process.platform}-${process.arch}, ${cpus().length} cores, 1-minute load average ${loadavg()[0]!.toFixed(1)} at the start; batches of ${BATCH_BYTES / 1024} KiB of records with ${VALUE_BYTES}-byte values; ${options.rounds} rounds of ${options.seconds} s, medians.`,
    'MB/s of uncompressed bytes, one batch at a time; CPU = process CPU µs per batch (all threads).',
    '',
    row([
      'codec',
      'payload',
      'ratio',
      'compress JS MB/s',
      'native MB/s',
      'x',
      'decompress JS MB/s',
      'native MB/s',
      'x',
      'compress CPU JS / native µs',
      'decompress CPU JS / native µs',
    ]),
    row(Array(11).fill('---')),
  ]
  for (const payload of ['base64', 'json'] as const) {
    const records = recordSet(payload)
    for (const { name, js, native } of codecs) {
      const nativeCodec = native?.implementation === 'native' ? native.codec : undefined
      const compressed = await (nativeCodec ?? js).compress({ buffer: records })
      const jsCompress = await medianOf(options, records.length, () => js.compress({ buffer: records }))
      const jsDecompress = await medianOf(options, records.length, () => js.decompress(compressed))
      const nativeCompress = nativeCodec && await medianOf(options, records.length, () => nativeCodec.compress({ buffer: records }))
      const nativeDecompress = nativeCodec && await medianOf(options, records.length, () => nativeCodec.decompress(compressed))
      const ratio = (records.length / compressed.length).toFixed(2)
      const speedUp = (a: Figure, b: Figure | undefined): string => b === undefined ? '—' : `${(b.mbPerSecond / a.mbPerSecond).toFixed(1)}x`
      lines.push(row([name, payload, ratio,
        fixed(jsCompress.mbPerSecond), nativeCompress ? fixed(nativeCompress.mbPerSecond) : '—', speedUp(jsCompress, nativeCompress),
        fixed(jsDecompress.mbPerSecond), nativeDecompress ? fixed(nativeDecompress.mbPerSecond) : '—', speedUp(jsDecompress, nativeDecompress),
        `${fixed(jsCompress.cpuMicrosPerBatch)} / ${nativeCompress ? fixed(nativeCompress.cpuMicrosPerBatch) : '—'}`,
        `${fixed(jsDecompress.cpuMicrosPerBatch)} / ${nativeDecompress ? fixed(nativeDecompress.cpuMicrosPerBatch) : '—'}`]))
      process.stderr.write(`${name} ${payload} done\n`)
    }
  }
  // A produced batch is checksummed once; a 256 KiB uncompressed one is the largest input it sees.
  const batchBody = recordSet('base64')
  const crcJs = await medianOf(options, batchBody.length, () => crc32cJs(batchBody))
  const crcNative = await medianOf(options, batchBody.length, () => crc32c(batchBody))
  lines.push(
    '',
    row(['CRC-32C of a 256 KiB batch', 'JS (slicing by 8) MB/s', `${crc32cImplementation} MB/s`, 'x', 'CPU JS / native µs']),
    row(Array(5).fill('---')),
    row([
      '',
      fixed(crcJs.mbPerSecond),
      fixed(crcNative.mbPerSecond),
      `${(crcNative.mbPerSecond / crcJs.mbPerSecond).toFixed(1)}x`,
      `${fixed(crcJs.cpuMicrosPerBatch)} / ${fixed(crcNative.cpuMicrosPerBatch)}`,
    ])
  )
  lines.push(
    '',
    `1-minute load average ${loadavg()[0]!.toFixed(1)} at the end (above the core count, other work competed: wall-clock MB/s suffer first, CPU per batch less).`
  )
  process.stdout.write(lines.join('\n') + '\n')
}

await main()
