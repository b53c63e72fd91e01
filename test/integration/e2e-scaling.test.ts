import assert from 'node:assert/strict'
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
  totalRecords,
  uniqueName,
} from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring, type SidecarProcess } from '../helpers/sidecar.js'
import { sampleSum, scrape, sidecarHttpPort } from '../helpers/sidecar-http.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 6

function keyed (from: number, count: number): Message[] {
  return Array.from({ length: count }, (_, i) => ({ partition: (from + i) % PARTITIONS, key: `k${from + i}`, value: `v${from + i}` }))
}

async function assigned (port: number): Promise<number> {
  return sampleSum(await scrape(port), 'kafka_mirror_assigned_partitions') ?? 0
}

test(
  'two sidecars with one group id share a 6-partition topic, copy it exactly once, and one takes over when the other gets SIGTERM',
  { timeout: 150_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    t.after(() => deleteTopicIfExists(target, topic))
    const groupId = uniqueName('e2e-scale')
    // Short session so a member that leaves is noticed quickly even if its LeaveGroup were lost.
    const consumer = { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500 }
    const start = (): SidecarProcess => spawnSidecar(t, { source, target, groupId, include: topic, consumer })
    const [a, b] = [start(), start()]
    const [portA, portB] = [await sidecarHttpPort(a), await sidecarHttpPort(b)]
    await Promise.all([waitMirroring(a), waitMirroring(b)])
    let split: number[] = []
    await waitUntil(
      async () => {
        split = [await assigned(portA), await assigned(portB)]
        return (split[0] as number) > 0 && (split[1] as number) > 0 && (split[0] as number) + (split[1] as number) === PARTITIONS
      },
      { timeoutMs: 40_000, message: `both instances to own some of the ${PARTITIONS} partitions (last ${JSON.stringify(split)})` }
    )
    t.diagnostic(`split between the two instances: ${split.join(' + ')}`)
    for (const sidecar of [a, b]) assert.match(sidecar.stderr(), /"msg":"partitions assigned","flow":"source->target","partitions":[1-5]\b/)

    // Steady state: both run, every record is copied once, in place (a fresh target keeps offsets).
    const steady = 3_000
    await produce(source, topic, keyed(0, steady))
    await waitUntil(async () => (await totalRecords(target, topic).catch(() => 0n)) >= BigInt(steady), {
      timeoutMs: 30_000,
      message: 'steady-state records copied',
    })
    await waitUntil(
      async () => {
        const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, groupId, topic)])
        return [...ends].every(([p, end]) => committed.get(p) === end)
      },
      { timeoutMs: 20_000, message: 'the group to commit the end offsets' }
    )
    assert.deepEqual(
      await endOffsets(target, topic),
      await endOffsets(source, topic),
      'exactly once: the target holds as many records per partition as the source'
    )
    const firstCopy = await readAll(target, topic)
    assert.deepEqual(auditKeys(firstCopy, steady), { missing: 0, duplicates: 0 })
    assert.equal(
      split.reduce((x, y) => x + y),
      PARTITIONS
    )

    // Records keep coming while b stops; a takes over b's partitions.
    const total = 9_000
    const producing = (async () => {
      for (let from = steady; from < total; from += 500) await produce(source, topic, keyed(from, 500))
    })()
    await waitUntil(async () => (await totalRecords(target, topic)) >= BigInt(steady + 1_000), { timeoutMs: 30_000, message: 'mirroring under way' })
    b.child.kill('SIGTERM')
    assert.equal(await b.exited, 0, b.stderr().slice(-2000))
    await producing
    await waitUntil(async () => (await assigned(portA)) === PARTITIONS, {
      timeoutMs: 40_000,
      message: `the remaining instance to own all ${PARTITIONS} partitions`,
    })
    await waitUntil(
      async () => {
        const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, groupId, topic)])
        return [...ends].every(([p, end]) => committed.get(p) === end)
      },
      { timeoutMs: 60_000, message: 'the remaining instance to commit everything' }
    )
    const copied = await readAll(target, topic)
    const { missing, duplicates } = auditKeys(copied, total)
    t.diagnostic(`takeover: ${copied.length} records on the target for ${total} produced, ${duplicates} duplicates`)
    assert.equal(missing, 0, 'nothing is lost when one instance stops')
    assert.equal(copied.length, total + duplicates)
    a.child.kill('SIGTERM')
    assert.equal(await a.exited, 0, a.stderr().slice(-2000))
  }
)
