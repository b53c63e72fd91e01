import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { test, type TestContext } from 'node:test'
import { promisify } from 'node:util'
import { createTopic, deleteTopicIfExists, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
/** Fields kcat prints (offsets aside): partition, key (NULL for a null key with -Z), value (NULL for a tombstone), timestamp, headers. */
const FORMAT = '%p|%k|%s|%T|%h\n'
const PARTITIONS = 3

/** Produces `lines` (`partition|key|value`, `~` for null) with kcat, compressed with `codec`, in batches of up to 200. */
async function kcatProduce (bootstrap: string, topic: string, codec: string, lines: readonly string[]): Promise<void> {
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const own = lines.filter(line => line.startsWith(`${partition}|`)).map(line => line.slice(2))
    const child = spawn(
      'kcat',
      [
        '-P',
        '-b',
        bootstrap,
        '-t',
        topic,
        '-p',
        String(partition),
        '-z',
        codec,
        '-K',
        '|',
        '-Z',
        '-H',
        `codec=${codec}`,
        '-H',
        'twice=a',
        '-H',
        'twice=b',
        '-X',
        'linger.ms=50',
        '-X',
        'batch.num.messages=200',
      ],
      { stdio: ['pipe', 'ignore', 'pipe'] }
    )
    let stderr = ''
    child.stderr.on('data', chunk => { stderr += String(chunk) })
    // -Z: an empty key or value is sent as null (a null key, a tombstone).
    child.stdin.end(own.map(line => line.replaceAll('~', '')).join('\n') + '\n')
    const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
    assert.equal(code, 0, `kcat -P failed: ${stderr}`)
  }
}

/** Every record of `topic` as kcat prints it, per partition in offset order. */
async function kcatRead (bootstrap: string, topic: string, readCommitted = false): Promise<string[]> {
  const { stdout } = await execFileAsync(
    'kcat',
    ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-Z', '-f', FORMAT, ...(readCommitted ? ['-X', 'isolation.level=read_committed'] : [])],
    { maxBuffer: 64 * 1024 * 1024 }
  )
  const lines = stdout.split('\n').filter(line => line !== '')
  // kcat interleaves partitions; within each the order is the offsets'.
  return Array.from({ length: PARTITIONS }, (_, p) => lines.filter(line => line.startsWith(`${p}|`))).flat()
}

/** 3,000 records over three partitions; every 7th key null, every 5th value a tombstone. */
function sourceLines (): string[] {
  return Array.from(
    { length: 3_000 },
    (_, i) => `${i % PARTITIONS}|${i % 7 === 3 ? '~' : `key-${i}`}|${i % 5 === 2 ? '~' : JSON.stringify({ id: i, note: 'n'.repeat(i % 300) })}`
  )
}

/** `kafka_mirror_batches_total` by path (and reason) from a scrape. */
function batchesByPath (metrics: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const match of metrics.matchAll(/^kafka_mirror_batches_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = match[1] as string
    const path = /path="([^"]*)"/.exec(labels)?.[1] ?? ''
    const reason = /reason="([^"]*)"/.exec(labels)?.[1] ?? ''
    const key = reason === '' ? path : `${path}:${reason}`
    out.set(key, (out.get(key) ?? 0) + Number(match[2]))
  }
  return out
}

/** Values of the transcoder gauges in a scrape, one per flow series. */
function transcoderGauges (metrics: string): { busySlots: number[], waitingBatches: number[] } {
  const values = (name: string): number[] =>
    [...metrics.matchAll(new RegExp(`^${name}\\{[^}]*flow="[^"]+"[^}]*\\} (\\S+)$`, 'gm'))].map(match => Number(match[1]))
  return { busySlots: values('kafka_mirror_transcoder_busy_slots'), waitingBatches: values('kafka_mirror_transcoder_waiting_batches') }
}

async function copyAndCompare (
  t: TestContext,
  from: string,
  to: string,
  args: readonly string[],
  readCommitted: boolean,
  path: 'transcoded' | 'deep' = 'transcoded'
): Promise<SidecarProcess> {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { name: uniqueName(`transcode-${from}-${to}`), partitions: PARTITIONS })
  t.after(() => deleteTopicIfExists(target, topic))
  const lines = sourceLines()
  await kcatProduce(source.bootstrap, topic, from, lines)
  const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('transcode'), include: topic, producer: { 'compression.type': to }, args })
  await waitMirroring(sidecar)
  // Records, not offsets: with exactly-once the transaction markers take offsets too.
  let written: string[] = []
  // Scraped while the copy runs: the transcoder gauges of the flow, one series each.
  const during: Array<ReturnType<typeof transcoderGauges>> = []
  const port = await sidecarHttpPort(sidecar)
  await waitUntil(
    async () => {
      if (path === 'transcoded') during.push(transcoderGauges(await scrape(port)))
      if ((await totalRecords(target, topic).catch(() => 0n)) < BigInt(lines.length)) return false
      written = await kcatRead(target.bootstrap, topic, readCommitted)
      return written.length >= lines.length
    },
    { timeoutMs: 90_000, message: `${topic} copied` }
  )
  const read = await kcatRead(source.bootstrap, topic)
  assert.equal(read.length, lines.length)
  assert.ok(
    read.some(line => line.includes('|NULL|')),
    'the source holds null keys and tombstones'
  )
  assert.deepEqual(written, read, 'every record, key, value, timestamp and header, in order per partition')
  const metrics = await scrape(port)
  const paths = batchesByPath(metrics)
  const transcoder = transcoderGauges(metrics)
  if (path === 'transcoded') {
    assert.ok((paths.get('transcoded:codec') ?? 0) > 0, `batches went the transcoded path: ${JSON.stringify([...paths])}`)
    assert.equal(paths.get('deep:codec') ?? 0, 0, `no batch was decoded for its codec: ${JSON.stringify([...paths])}`)
    const slots = Number(process.env.UV_THREADPOOL_SIZE ?? 4)
    assert.ok(during.length > 0)
    for (const gauges of during) {
      assert.equal(gauges.busySlots.length, 1, `one busy-slots series during the copy: ${JSON.stringify(during)}`)
      assert.equal(gauges.waitingBatches.length, 1, `one waiting-batches series during the copy: ${JSON.stringify(during)}`)
      assert.ok(gauges.busySlots[0]! >= 0 && gauges.busySlots[0]! <= slots, `busy slots within the ${slots} of libuv's pool: ${JSON.stringify(during)}`)
      assert.ok(gauges.waitingBatches[0]! >= 0, JSON.stringify(during))
    }
    // Copied and idle: the flow's transcoder gauges are there, every slot free and nothing waiting.
    assert.deepEqual(transcoder, { busySlots: [0], waitingBatches: [0] }, `transcoder gauges of the one flow: ${JSON.stringify(transcoder)}`)
  } else {
    assert.ok((paths.get('deep:disabled') ?? 0) > 0, `batches were decoded: ${JSON.stringify([...paths])}`)
    assert.equal(paths.get('transcoded:codec') ?? 0, 0)
    assert.deepEqual(transcoder, { busySlots: [], waitingBatches: [] }, 'no transcoder when every batch is decoded')
  }
  return sidecar
}

for (const [from, to] of [['none', 'lz4'], ['none', 'zstd'], ['gzip', 'zstd'], ['snappy', 'none']] as const) {
  test(
    `a ${from} source written in ${to} (compression.type): the batches are recompressed without decoding, kcat reads back every record identical, in order ` +
      "per partition, and /metrics shows the flow's transcoder busy slots and waiting batches while it copies (0 once idle)",
    { timeout: 240_000 },
    async t => {
      const sidecar = await copyAndCompare(t, from, to, [], false)
      sidecar.child.kill('SIGTERM')
      assert.equal(await sidecar.exited, 0)
    }
  )
}

test(
  "exactly-once with a codec change (gzip source, lz4 target): the recompressed batches are written in the lanes' transactions; a read_committed reader sees every record once, identical",
  { timeout: 240_000 },
  async t => {
    const sidecar = await copyAndCompare(t, 'gzip', 'lz4', ['--exactly.once', 'true', '--offset.commit.interval.ms', '300'], true)
    const metrics = await scrape(await sidecarHttpPort(sidecar))
    assert.match(metrics, /kafka_mirror_transactions_total\{[^}]*result="committed"[^}]*\} [1-9]/)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  "exactly-once, every record decoded (pass.through off) and written in lz4: the batches the mirror encodes from decoded records are written in the lanes' " +
    'transactions; a read_committed reader sees every record once, identical; no transcoder gauges',
  { timeout: 240_000 },
  async t => {
    const sidecar = await copyAndCompare(
      t,
      'snappy',
      'lz4',
      ['--exactly.once', 'true', '--offset.commit.interval.ms', '300', '--pass.through', 'off'],
      true,
      'deep'
    )
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test(
  'a compacted source (offset gaps), written in zstd: every record left after compaction, with its key, value, tombstone, headers and timestamp, in order per partition; the cleaned batches are counted as the deep path',
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, {
      name: uniqueName('transcode-compacted'),
      partitions: PARTITIONS,
      // Small segments that roll as the records arrive (only closed segments are cleaned), cleaned at once.
      configs: { 'cleanup.policy': 'compact', 'segment.ms': '100', 'min.cleanable.dirty.ratio': '0.01', 'min.compaction.lag.ms': '0' },
    })
    t.after(() => deleteTopicIfExists(target, topic))
    // Every key written four times, in rounds that each land in a segment of their own; a last record per partition closes the fourth.
    const keys = 300
    for (let round = 0; round <= 4; round++) {
      const lines =
        round === 4
          ? Array.from({ length: PARTITIONS }, (_, p) => `${p}|closing-${p}|last`)
          : Array.from({ length: keys }, (_, i) => `${i % PARTITIONS}|key-${i}|${round === 3 && i % 10 === 0 ? '~' : `round-${round}-${'v'.repeat(i % 50)}`}`)
      await kcatProduce(source.bootstrap, topic, 'gzip', lines)
      const rolled = Date.now() + 200
      await waitUntil(() => Date.now() > rolled, { timeoutMs: 1_000, message: 'the segment to age past segment.ms' })
    }
    // The log cleaner looks for work every 15 s (log.cleaner.backoff.ms): wait until one record per key is left,
    // so the target (created compacted too) has nothing left to remove from what it gets.
    let read: string[] = []
    await waitUntil(
      async () => {
        read = await kcatRead(source.bootstrap, topic)
        return read.length === keys + PARTITIONS
      },
      { timeoutMs: 180_000, intervalMs: 2_000, message: 'the log cleaner to leave one record per key on the source' }
    )
    const sidecar = spawnSidecar(t, { source, target, groupId: uniqueName('transcode'), include: topic, producer: { 'compression.type': 'zstd' } })
    await waitMirroring(sidecar)
    let written: string[] = []
    await waitUntil(
      async () => {
        written = await kcatRead(target.bootstrap, topic)
        return written.length >= read.length
      },
      { timeoutMs: 90_000, message: `${topic} copied` }
    )
    assert.ok(
      read.some(line => line.includes('|NULL|')),
      'tombstones are among the records left'
    )
    assert.ok(
      read.every(line => !line.includes('round-0')),
      'the first round was compacted away'
    )
    assert.deepEqual(written, read, 'every record left, identical, in order per partition')
    const paths = batchesByPath(await scrape(await sidecarHttpPort(sidecar)))
    // The cleaner leaves offset gaps, and marks the batches it rewrote around tombstones with a delete horizon.
    assert.ok((paths.get('deep:offset_gaps') ?? 0) + (paths.get('deep:delete_horizon') ?? 0) > 0, `cleaned batches decoded: ${JSON.stringify([...paths])}`)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)
