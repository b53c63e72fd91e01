import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { promisify } from 'node:util'
import type { LocalCluster } from '../../scripts/local-kafka/clusters.js'
import { committedOffsets, createTopic, endOffsets, sharedClusters, startExtraCluster, totalRecords, uniqueName } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const execFileAsync = promisify(execFile)
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
/** Records per codec, half written before the outage and half during it. */
const RECORDS = 160_000
const VALUE_BYTES = 500
const PARTITIONS = 4
const OUTAGE_MS = 20_000
/** The budget: `node --max-old-space-size=128`. */
const HEAP_MIB = 128
/** What the README tells users to give the container with the default queue settings. */
const RSS_LIMIT_MIB = 256

/**
 * Key: the record number in hex, 16 characters; value: the record number zero-padded to 500 bytes
 * (compresses about 100x), as the benchmark's compressible scenarios.
 */
function lines (from: number, count: number): string {
  let text = ''
  for (let i = from; i < from + count; i++) text += i.toString(16).padStart(16, '0') + '\t' + String(i).padStart(VALUE_BYTES, '0') + '\n'
  return text
}

/** Writes records `from..from+count-1` with kcat (librdkafka, an independent client) in `codec`, in large batches as a tuned producer does. */
async function kcatProduce (bootstrap: string, topic: string, codec: string, from: number, count: number): Promise<void> {
  const child = spawn('kcat', ['-P', '-b', bootstrap, '-t', topic, '-z', codec, '-K', '\t', '-X', 'acks=all', '-X', 'linger.ms=50', '-X', 'batch.size=1000000',
    '-X', 'queue.buffering.max.messages=500000', '-X', 'queue.buffering.max.kbytes=1048576'], { stdio: ['pipe', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', chunk => { stderr += String(chunk) })
  const exited = new Promise<number | null>(resolve => child.once('exit', resolve))
  for (let first = from; first < from + count; first += 10_000) {
    if (!child.stdin.write(lines(first, Math.min(10_000, from + count - first)))) await new Promise(resolve => child.stdin.once('drain', resolve))
  }
  child.stdin.end()
  assert.equal(await exited, 0, `kcat -P ${codec} failed: ${stderr}`)
}

/** Every key on `topic`, read back with kcat: records and distinct keys. */
async function kcatKeys (bootstrap: string, topic: string): Promise<{ records: number, keys: Set<string> }> {
  const { stdout } = await execFileAsync('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k\n'], {
    maxBuffer: 64 * 1024 * 1024,
  })
  const keys = stdout.split('\n').filter(line => line !== '')
  return { records: keys.length, keys: new Set(keys) }
}

/** Peak resident memory of a process, from /proc (VmHWM), in MiB. */
function peakRssMiB (pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  return kb / 1024
}

function assertRunning (sidecar: SidecarProcess, when: string): void {
  assert.equal(sidecar.child.exitCode, null, `the sidecar exited ${when} (${sidecar.child.exitCode}):\n${sidecar.stderr().slice(-3000)}`)
}

async function onTarget (target: LocalCluster, topics: readonly string[]): Promise<number> {
  let total = 0n
  for (const topic of topics) total += await totalRecords(target, topic).catch(() => 0n)
  return Number(total)
}

test(
  'memory budget: under node --max-old-space-size=128 with the default queue, kcat sources in all five codecs whose records compress 100x and a 20 s target outage in the middle are copied whole, and verify passes',
  { timeout: 300_000 },
  async t => {
    const { source } = await sharedClusters()
    const target = await startExtraCluster(t, 'budget-target')
    const prefix = uniqueName('budget')
    const topics = CODECS.map(codec => `${prefix}-${codec}`)
    // The target's topics go with its cluster when the test ends.
    for (const topic of topics) await createTopic(t, source, { name: topic, partitions: PARTITIONS })
    const half = RECORDS / 2
    await Promise.all(CODECS.map(async (codec, i) => await kcatProduce(source.bootstrap, topics[i] as string, codec, 0, half)))

    const group = uniqueName('budget')
    // The default queue (--queue.size 10000, --queue.bytes 64 MiB) and the default path (pass-through auto).
    const sidecar = spawnSidecar(t, { source, target, groupId: group, include: `${prefix}-.*`, env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` } })
    await waitMirroring(sidecar)
    const pid = sidecar.child.pid as number
    const port = await sidecarHttpPort(sidecar)
    await waitUntil(async () => sidecar.child.exitCode !== null || (await onTarget(target, topics)) >= half * CODECS.length, {
      timeoutMs: 60_000,
      message: 'the first half of every codec on the target',
    })
    assertRunning(sidecar, 'before the outage')
    const beforeOutage = peakRssMiB(pid)

    // The outage: the target broker frozen (SIGSTOP, as a hung broker) while the second half is written to the source.
    const frozenAt = Date.now()
    const queued = { records: 0, bytes: 0 }
    await target.freeze()
    t.after(() => target.thaw())
    try {
      await Promise.all(CODECS.map(async (codec, i) => await kcatProduce(source.bootstrap, topics[i] as string, codec, half, half)))
      const onSource = Number(
        (await Promise.all(topics.map(async topic => [...(await endOffsets(source, topic)).values()].reduce((a, b) => a + b, 0n)))).reduce((a, b) => a + b, 0n)
      )
      assert.equal(onSource, RECORDS * CODECS.length, 'the whole second half is on the source during the outage')
      await waitUntil(
        async () => {
          const exposition = await scrape(port)
          queued.records = Math.max(queued.records, sampleSum(exposition, 'kafka_mirror_queue_records') ?? 0)
          queued.bytes = Math.max(queued.bytes, sampleSum(exposition, 'kafka_mirror_queue_bytes') ?? 0)
          return sidecar.child.exitCode !== null || Date.now() - frozenAt >= OUTAGE_MS
        },
        { timeoutMs: OUTAGE_MS + 10_000, intervalMs: 200, message: 'twenty seconds of outage' }
      )
      assertRunning(sidecar, 'while the target is frozen')
    } finally {
      await target.thaw()
    }
    const duringOutage = peakRssMiB(pid)
    t.diagnostic(`outage: the queue held up to ${queued.records} records, ${(queued.bytes / 2 ** 20).toFixed(1)} MiB`)
    assert.ok(queued.records > 0, 'the sidecar kept fetching into its queue while the target was frozen')

    await waitUntil(async () => sidecar.child.exitCode !== null || (await onTarget(target, topics)) >= RECORDS * CODECS.length, {
      timeoutMs: 90_000,
      message: 'every record on the target after the outage',
    })
    assertRunning(sidecar, 'after the outage')
    const caughtUpMs = Date.now() - frozenAt - OUTAGE_MS
    await waitUntil(
      async () => {
        for (const topic of topics) {
          const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, group, topic)])
          if (![...ends].every(([p, end]) => committed.get(p) === end)) return false
        }
        return true
      },
      { timeoutMs: 30_000, message: 'the mirror to commit everything' }
    )
    const peak = peakRssMiB(pid)
    t.diagnostic(
      `memory budget: peak RSS ${peak.toFixed(0)} MiB (${beforeOutage.toFixed(0)} MiB before the outage, ${duringOutage.toFixed(0)} MiB by its end) with a ${HEAP_MIB} MiB heap, ${RECORDS * CODECS.length} records of ${VALUE_BYTES} B (${((RECORDS * CODECS.length * (VALUE_BYTES + 16)) / 2 ** 20).toFixed(0)} MiB decompressed); all on the target ${(caughtUpMs / 1000).toFixed(1)} s after the thaw`
    )

    for (const [i, codec] of CODECS.entries()) {
      const topic = topics[i] as string
      const copied = await kcatKeys(target.bootstrap, topic)
      let missing = 0
      for (let n = 0; n < RECORDS; n++) if (!copied.keys.has(n.toString(16).padStart(16, '0'))) missing++
      t.diagnostic(`${codec}: ${copied.records} records on the target, ${copied.records - copied.keys.size} duplicates`)
      assert.equal(missing, 0, `${codec}: no record missing`)
      assert.equal(copied.keys.size, RECORDS, `${codec}: no key that was not written`)
      const verify = await runMirrorCheck(
        ['verify', '--source', source.bootstrap, '--target', target.bootstrap, '--topic', topic, '--group', group, '--format', 'json'],
        { timeoutMs: 120_000 }
      )
      assert.equal(verify.code, 0, `verify of the ${codec} copy: ${verify.stdout.slice(0, 3000)}${verify.stderr}`)
    }
    assert.equal(sidecar.child.exitCode, null, 'the sidecar never exited')
    assert.ok(peak < RSS_LIMIT_MIB, `peak RSS ${peak.toFixed(0)} MiB stays within the ${RSS_LIMIT_MIB} MiB the README gives for the default queue`)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)
