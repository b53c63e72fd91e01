import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import {
  auditKeys,
  committedOffsets,
  createTopic,
  deleteTopicIfExists,
  endOffsets,
  produce,
  readAll,
  sharedClusters,
  startExtraCluster,
  totalRecords,
  uniqueName,
  withAdmin,
} from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

function keyed (from: number, count: number, partitions: number, valueBytes = 100): Message[] {
  const now = Date.now()
  return Array.from({ length: count }, (_, i) => ({
    partition: (from + i) % partitions,
    key: `k${from + i}`,
    value: `${from + i}:`.padEnd(valueBytes, 'v'),
    timestamp: String(now + i),
  }))
}

/** Peak resident memory of a process, from /proc (VmHWM), in MiB. */
function peakRssMiB (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN)
  return kb / 1024
}

test('kill -9 mid-stream and a restart lose nothing (duplicates are counted)', { timeout: 240_000 }, async t => {
  const { source, target } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 4 })
  t.after(async () => { const { deleteTopicIfExists } = await import('../helpers/kafka.js'); await deleteTopicIfExists(target, topic) })
  const groupId = uniqueName('kill9')
  const total = 20_000
  await produce(source, topic, keyed(0, 5_000, 4))
  const consumer = { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000 }
  const first = spawnSidecar(t, { source, target, groupId, include: topic, consumer, args: ['--offset.commit.interval.ms', '200', '--queue.size', '2000'] })
  await waitMirroring(first)
  const producing = (async () => {
    for (let from = 5_000; from < total; from += 1_000) await produce(source, topic, keyed(from, 1_000, 4))
  })()
  await waitUntil(async () => await totalRecords(target, topic) >= 8_000n, { timeoutMs: 60_000, message: 'mirroring under way' })
  first.child.kill('SIGKILL')
  assert.equal(await first.exited, 'SIGKILL')
  await producing

  const second = spawnSidecar(t, { source, target, groupId, include: topic, consumer, args: ['--offset.commit.interval.ms', '200'] })
  await waitMirroring(second)
  await waitUntil(async () => {
    const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, groupId, topic)])
    return [...ends].every(([p, end]) => committed.get(p) === end)
  }, { timeoutMs: 90_000, message: 'the restarted mirror to commit everything' })
  const copied = await readAll(target, topic)
  const { missing, duplicates } = auditKeys(copied, total)
  t.diagnostic(`kill -9: ${copied.length} records on the target for ${total} produced, ${duplicates} duplicates`)
  assert.equal(missing, 0, 'no record may be missing after kill -9 and restart')
  assert.equal(copied.length, total + duplicates)
  second.child.kill('SIGTERM')
  assert.equal(await second.exited, 0)
})

test('a target broker down for 20 s: the sidecar retries within its queue bound, resumes, loses nothing', { timeout: 240_000 }, async t => {
  const { source } = await sharedClusters()
  const target = await startExtraCluster(t, 'outage-target')
  const topic = await createTopic(t, source, { partitions: 3 })
  const groupId = uniqueName('outage')
  const queueRecords = 2_000
  const sidecar = spawnSidecar(t, {
    source,
    target,
    groupId,
    include: topic,
    args: ['--queue.size', String(queueRecords), '--queue.bytes', String(4 * 1024 * 1024)],
  })
  await waitMirroring(sidecar)
  await produce(source, topic, keyed(0, 3_000, 3, 1_000))
  await waitUntil(async () => await totalRecords(target, topic) === 3_000n, { timeoutMs: 60_000, message: 'first part copied' })

  await target.pause()
  const downSince = Date.now()
  for (let from = 3_000; from < 33_000; from += 500) await produce(source, topic, keyed(from, 500, 3, 1_000))
  await waitUntil(() => sidecar.stderr().includes('writing to the target failed; retrying'), { timeoutMs: 30_000, message: 'the sidecar to retry' })
  const beforeRss = peakRssMiB(sidecar.child.pid as number)
  await waitUntil(() => Date.now() - downSince >= 20_000, { timeoutMs: 30_000, intervalMs: 500, message: 'twenty seconds of outage' })
  assert.equal(sidecar.child.exitCode, null, 'the sidecar keeps running while the target is down')
  const committed = await committedOffsets(source, groupId, topic)
  const committedTotal = [...committed.values()].reduce((a, b) => a + b, 0n)
  assert.ok(committedTotal <= 3_000n + BigInt(queueRecords), `nothing beyond what the target acknowledged is committed (${committedTotal})`)
  const peakDuringOutage = peakRssMiB(sidecar.child.pid as number)
  t.diagnostic(`outage: peak RSS ${peakDuringOutage.toFixed(0)} MiB (before the outage ${beforeRss.toFixed(0)} MiB), queue bound ${queueRecords} records / 4 MiB`)

  await target.resume()
  await waitUntil(async () => await totalRecords(target, topic).catch(() => 0n) >= 33_000n, { timeoutMs: 120_000, message: 'catch-up after the outage' })
  const copied = await readAll(target, topic)
  const { missing, duplicates } = auditKeys(copied, 33_000)
  t.diagnostic(`outage: ${duplicates} duplicates after retries`)
  assert.equal(missing, 0)
  assert.ok(peakDuringOutage < 400, `memory stays bounded during the outage (peak ${peakDuringOutage.toFixed(0)} MiB)`)
  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0)
})

test(
  'a source broker stopped for 20 s and started again: the sidecar keeps running, rejoins when the broker is back, loses nothing',
  { timeout: 240_000 },
  async t => {
    const { target } = await sharedClusters()
    const source = await startExtraCluster(t, 'outage-source')
    // The extra cluster stops in the test's after hooks: created here rather than with createTopic (whose delete hook would run after).
    const topic = uniqueName('source-outage')
    await withAdmin(source, admin => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3 }] }))
    t.after(() => deleteTopicIfExists(target, topic))
    const groupId = uniqueName('source-outage')
    const sidecar = spawnSidecar(t, { source, target, groupId, include: topic, consumer: { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 200 } })
    await waitMirroring(sidecar)
    await produce(source, topic, keyed(0, 3_000, 3))
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) === 3_000n, { timeoutMs: 60_000, message: 'first part copied' })

    await source.pause()
    const downSince = Date.now()
    // Heartbeats every 200 ms make it likelier that one meets the stopping broker's NOT_COORDINATOR
    // answer; kafkajs then looks for the coordinator while no broker answers, which used to stop the
    // consumer for good ("Failed to find group coordinator", seen once in the exactly-once kill test).
    await waitUntil(() => sidecar.stderr().includes('ECONNREFUSED') || sidecar.child.exitCode !== null, {
      timeoutMs: 30_000,
      message: 'the sidecar to notice the source is down',
    })
    await waitUntil(() => Date.now() - downSince >= 20_000 || sidecar.child.exitCode !== null, {
      timeoutMs: 30_000,
      intervalMs: 500,
      message: 'twenty seconds of outage',
    })
    assert.equal(sidecar.child.exitCode, null, `the sidecar keeps running while the source is down:\n${sidecar.stderr().slice(-3000)}`)
    await source.resume()
    await produce(source, topic, keyed(3_000, 3_000, 3))
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= 6_000n || sidecar.child.exitCode !== null, {
      timeoutMs: 120_000,
      message: 'the rest copied after the outage',
    })
    assert.equal(sidecar.child.exitCode, null, `the sidecar kept running after the outage:\n${sidecar.stderr().slice(-3000)}`)
    const { missing } = auditKeys(await readAll(target, topic), 6_000)
    assert.equal(missing, 0)
    sidecar.child.kill('SIGTERM')
    assert.equal(await sidecar.exited, 0)
  }
)

test('a record larger than the target accepts stops the mirror with a clear error and is not committed', { timeout: 180_000 }, async t => {
  const { source } = await sharedClusters()
  const target = await startExtraCluster(t, 'small-target', { 'message.max.bytes': '20000' })
  const topic = await createTopic(t, source, { partitions: 1 })
  const groupId = uniqueName('toolarge')
  const messages = keyed(0, 50, 1, 200)
  messages.push({ partition: 0, key: 'big', value: 'x'.repeat(50_000), timestamp: String(Date.now()) })
  messages.push(...keyed(50, 10, 1, 200))
  await produce(source, topic, messages)

  const sidecar = spawnSidecar(t, { source, target, groupId, include: topic })
  const code = await sidecar.exited
  assert.equal(code, 2, `exit code; stderr:\n${sidecar.stderr().slice(-3000)}`)
  const lastLine = sidecar.stderr().trim().split('\n').pop() ?? ''
  assert.match(lastLine, new RegExp(`^mirror-sidecar: cannot write ${topic} partition 0 offset 50 to ${topic}: MESSAGE_TOO_LARGE`))
  assert.doesNotMatch(sidecar.stderr(), /\n\s+at /, 'no stack trace')
  const committed = (await committedOffsets(source, groupId, topic)).get(0) ?? -1n
  assert.ok(committed <= 50n, `offset 50 (the big record) must not be committed past; committed ${committed}`)
  assert.equal(await totalRecords(target, topic), 50n, 'the records before it are on the target')
})
