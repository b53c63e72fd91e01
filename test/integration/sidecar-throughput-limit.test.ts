import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, produce, readAll, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const LIMIT_BYTES = 65_536
const RECORDS = 480
const VALUE_BYTES = 1000

/** One sample of the mirror's fetched bytes, and the latest time it can have been read at. */
interface Sample { readonly elapsedMs: number, readonly consumedBytes: number }

/**
 * The source's batches are uncompressed; with `targetCodec` the target's `compression.type` differs,
 * so each batch is recompressed (gzip makes its 1,000 'v's a few dozen bytes): the limit and
 * `kafka_mirror_consumed_bytes_total` still count the bytes fetched, before the recompression.
 */
const CASES = [
  { passThrough: 'auto', targetCodec: undefined },
  { passThrough: 'off', targetCodec: undefined },
  { passThrough: 'auto', targetCodec: 'gzip' },
] as const

for (const { passThrough, targetCodec } of CASES) {
  const codecText = targetCodec === undefined ? '' : `, target compression.type ${targetCodec}`
  test(
    `--throughput.limit.bytes ${LIMIT_BYTES} (pass.through ${passThrough}${codecText}): the bytes fetched by any time t never exceed limit * (1 s + t), every record arrives once, the limit and the throttled time are in /metrics`,
    { timeout: 180_000 },
    async t => {
      const { source, target } = await sharedClusters()
      const topic = await createTopic(t, source, { partitions: 2 })
      await createTopic(t, target, { name: topic, partitions: 2 })
      const value = 'v'.repeat(VALUE_BYTES)
      for (let from = 0; from < RECORDS; from += 120) {
        await produce(
          source,
          topic,
          Array.from({ length: 120 }, (_, i) => ({ partition: (from + i) % 2, key: `k${from + i}`, value }))
        )
      }

      // Time 0 of the bound: before the process (and its token bucket) exists, so the bound only loosens.
      const startMs = Date.now()
      const sidecar = spawnSidecar(t, {
        source,
        target,
        groupId: uniqueName('limit'),
        include: topic,
        args: ['--throughput.limit.bytes', String(LIMIT_BYTES), '--pass.through', passThrough],
        ...(targetCodec === undefined ? {} : { producer: { 'compression.type': targetCodec } }),
      })
      await waitMirroring(sidecar)
      const port = await sidecarHttpPort(sidecar)
      const samples: Sample[] = []
      await waitUntil(
        async () => {
          const exposition = await scrape(port)
          // Taken after the answer: the counter was read no later than this.
          samples.push({ elapsedMs: Date.now() - startMs, consumedBytes: sampleSum(exposition, 'kafka_mirror_consumed_bytes_total') ?? 0 })
          return (await totalRecords(target, topic)) === BigInt(RECORDS)
        },
        { timeoutMs: 120_000, intervalMs: 100, message: `all ${RECORDS} records on the target` }
      )

      // The target can show a record a moment before the mirror counted its fetch: one more sample once all are there.
      const last = await scrape(port)
      samples.push({ elapsedMs: Date.now() - startMs, consumedBytes: sampleSum(last, 'kafka_mirror_consumed_bytes_total') ?? 0 })
      const over = samples.filter(sample => sample.consumedBytes > LIMIT_BYTES * (1 + sample.elapsedMs / 1000))
      assert.deepEqual(over, [], `samples above the bound limit * (1 s + t): ${JSON.stringify(over)}`)
      const fetched = samples[samples.length - 1]?.consumedBytes ?? 0
      assert.ok(fetched >= RECORDS * VALUE_BYTES, `the mirror counted ${fetched} fetched bytes for ${RECORDS} records of ${VALUE_BYTES} B`)

      const exposition = await scrape(port)
      assert.equal(sampleSum(exposition, 'kafka_mirror_throughput_limit_bytes_per_second'), LIMIT_BYTES)
      // Several times the one-second burst was fetched: the copy had to wait for the limit.
      assert.ok((sampleSum(exposition, 'kafka_mirror_throttled_seconds_total') ?? 0) > 0, exposition)

      const copied = await readAll(target, topic)
      assert.equal(copied.length, RECORDS)
      assert.equal(new Set(copied.map(record => String(record.key))).size, RECORDS, 'every key once')
      sidecar.child.kill('SIGTERM')
      assert.equal(await sidecar.exited, 0, sidecar.stderr())
    }
  )
}

test(
  'a stop while fetched batches wait for a low limit ends promptly with exit 0, and a later run without the limit copies every record (nothing lost)',
  { timeout: 180_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 2 })
    await createTopic(t, target, { name: topic, partitions: 2 })
    const value = 'v'.repeat(VALUE_BYTES)
    await produce(
      source,
      topic,
      Array.from({ length: 200 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value }))
    )
    const groupId = uniqueName('limit-stop')
    // 1024 bytes/s: the 200 KB fetched would take minutes; the stop must not wait for that.
    const slow = spawnSidecar(t, { source, target, groupId, include: topic, args: ['--throughput.limit.bytes', '1024'] })
    await waitMirroring(slow)
    const port = await sidecarHttpPort(slow)
    await waitUntil(async () => (sampleSum(await scrape(port), 'kafka_mirror_throttled_seconds_total') ?? 0) > 0, {
      timeoutMs: 60_000,
      message: 'a fetched batch waiting for the limit',
    })
    slow.child.kill('SIGTERM')
    assert.equal(await slow.exited, 0, slow.stderr())
    assert.ok((await totalRecords(target, topic)) < 200n, 'the limit held most of the copy back')

    const fast = spawnSidecar(t, { source, target, groupId, include: topic })
    await waitMirroring(fast)
    const keys = new Set<string>()
    await waitUntil(
      async () => {
        keys.clear()
        for (const record of await readAll(target, topic)) keys.add(String(record.key))
        return keys.size === 200
      },
      { timeoutMs: 120_000, intervalMs: 500, message: 'every key on the target' }
    )
    fast.child.kill('SIGTERM')
    assert.equal(await fast.exited, 0, fast.stderr())
  }
)
