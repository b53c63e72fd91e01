import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Message } from '@kafka-mirror-sidecar/kafkajs'
import { committedOffsets, createTopic, endOffsets, produce, readAll, recordView, sharedClusters, totalRecords, uniqueName } from '../helpers/kafka.js'
import { spawnSidecar, waitMirroring } from '../helpers/sidecar.js'
import { waitUntil } from '../helpers/wait.js'

function sampleMessages (count: number, partitions: number, now = Date.now()): Message[] {
  const messages: Message[] = []
  for (let i = 0; i < count; i++) {
    messages.push({
      partition: i % partitions,
      key: i % 7 === 0 ? null : Buffer.from(`key-${i}`),
      value: i % 5 === 0 ? null : Buffer.from(`value-${i}-${'x'.repeat(i % 50)}`),
      timestamp: String(now - 60_000 + i),
      headers: i % 3 === 0 ? {} : { trace: `t-${i}`, bin: Buffer.from([i % 256, 0, 255]), multi: ['a', Buffer.from('b')] },
    })
  }
  return messages
}

test('mirrors several topics partition by partition, field by field, and commits what the target holds', { timeout: 180_000 }, async t => {
  const { source, target } = await sharedClusters()
  const prefix = uniqueName('copy')
  const topics = [await createTopic(t, source, { name: `${prefix}-a`, partitions: 3 }), await createTopic(t, source, { name: `${prefix}-b`, partitions: 2 })]
  for (const topic of topics) {
    t.after(async () => {
      const { deleteTopicIfExists } = await import('../helpers/kafka.js')
      await deleteTopicIfExists(target, topic)
    })
  }
  await produce(source, topics[0] as string, sampleMessages(900, 3))
  await produce(source, topics[1] as string, sampleMessages(400, 2))
  const groupId = uniqueName('mirror')

  const sidecar = spawnSidecar(t, { source, target, groupId, include: `${prefix}-.*` })
  await waitMirroring(sidecar)
  for (const topic of topics) {
    const expected = await totalRecords(source, topic)
    await waitUntil(async () => await totalRecords(target, topic) === expected, { timeoutMs: 60_000, message: `${topic} copied` })
  }
  for (const topic of topics) {
    const [from, to] = await Promise.all([readAll(source, topic), readAll(target, topic)])
    assert.equal(to.length, from.length)
    assert.deepEqual(to.map(recordView), from.map(recordView), `${topic}: same records in the same partitions and order`)
    assert.deepEqual(to.map(r => r.offset), from.map(r => r.offset), `${topic}: a fresh target gets the same offsets`)
  }
  await waitUntil(async () => {
    for (const topic of topics) {
      const [ends, committed] = await Promise.all([endOffsets(source, topic), committedOffsets(source, groupId, topic)])
      for (const [partition, end] of ends) if (committed.get(partition) !== end) return false
    }
    return true
  }, { timeoutMs: 20_000, message: 'the group to commit the end offsets' })

  sidecar.child.kill('SIGTERM')
  assert.equal(await sidecar.exited, 0, `exit code after SIGTERM; stderr:\n${sidecar.stderr().slice(-2000)}`)
})

test('include and exclude follow MirrorMaker: comma means or, the whole name must match; new topics are picked up', { timeout: 180_000 }, async t => {
  const { source, target } = await sharedClusters()
  const p = uniqueName('sel').replace(/-/g, '')
  const names = {
    orders: `${p}orders`,
    ordersEu: `${p}orders-eu`,
    payments: `${p}payments`,
    paymentsV2: `${p}payments-v2`,
    ordersInternal: `${p}orders-internal`,
    audit: `${p}audit`,
  }
  for (const name of Object.values(names)) {
    await createTopic(t, source, { name })
    t.after(async () => { const { deleteTopicIfExists } = await import('../helpers/kafka.js'); await deleteTopicIfExists(target, name) })
    await produce(source, name, [{ key: 'k', value: name }])
  }
  const sidecar = spawnSidecar(t, {
    source,
    target,
    groupId: uniqueName('sel'),
    include: `${p}orders.*, ${p}payments`,
    args: ['--exclude', '.*-internal'],
  })
  await waitMirroring(sidecar)
  await waitUntil(
    async () =>
      (await totalRecords(target, names.orders).catch(() => 0n)) === 1n &&
      (await totalRecords(target, names.payments).catch(() => 0n)) === 1n &&
      (await totalRecords(target, names.ordersEu).catch(() => 0n)) === 1n,
    { timeoutMs: 60_000, message: 'selected topics copied' }
  )
  const targetTopics = new Set(await (await import('../helpers/kafka.js')).withAdmin(target, admin => admin.listTopics()))
  assert.equal(targetTopics.has(names.paymentsV2), false, 'payments must match the whole name, not a prefix')
  assert.equal(targetTopics.has(names.ordersInternal), false, 'excluded topic')
  assert.equal(targetTopics.has(names.audit), false, 'topic not included')

  const late = `${p}orders-late`
  await createTopic(t, source, { name: late, partitions: 2 })
  t.after(async () => { const { deleteTopicIfExists } = await import('../helpers/kafka.js'); await deleteTopicIfExists(target, late) })
  await produce(source, late, [{ partition: 0, key: 'a', value: '1' }, { partition: 1, key: 'b', value: '2' }])
  await waitUntil(async () => (await totalRecords(target, late).catch(() => 0n)) === 2n, {
    timeoutMs: 60_000,
    message: 'a topic created after start to be mirrored',
  })
  const copied = await readAll(target, late)
  assert.deepEqual(copied.map(r => [r.partition, r.value?.toString()]), [[0, '1'], [1, '2']])

  const { withAdmin } = await import('../helpers/kafka.js')
  await withAdmin(source, admin => admin.createPartitions({ topicPartitions: [{ topic: late, count: 3 }] }))
  await produce(source, late, [{ partition: 2, key: 'c', value: '3' }])
  await waitUntil(async () => (await totalRecords(target, late)) === 3n, {
    timeoutMs: 60_000,
    message: 'a partition added on the source to be added and mirrored',
  })
  const grown = await readAll(target, late)
  assert.deepEqual(grown.map(r => [r.partition, r.value?.toString()]), [[0, '1'], [1, '2'], [2, '3']])
})
