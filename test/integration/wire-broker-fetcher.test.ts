import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { createKafkaClient } from '../../src/kafka/client.js'
import { BATCH_OFFSETS } from '../../src/kafka/record-batch-header.js'
import { FetchRecorder, startFetcher } from '../helpers/fetch-recorder.js'
import { createTopic, endOffsets, produce, sharedClusters, withAdmin } from '../helpers/kafka.js'
import { dumpLogSegment } from '../helpers/log-segments.js'
import { waitUntil } from '../helpers/wait.js'

type Source = Awaited<ReturnType<typeof sharedClusters>>['source']

/** `rounds` sends of `perRound` records to each of `partitions` partitions: one batch per partition per send. */
async function produceRounds (source: Source, topic: string, partitions: number, rounds: number, perRound: (round: number) => number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const messages = Array.from({ length: partitions }, (_, partition) =>
      Array.from({ length: perRound(round) }, (_, i) => ({ partition, key: `k${partition}.${i}`, value: `value ${partition}/${round}/${i}`.repeat(8) }))
    ).flat()
    await produce(source, topic, messages)
  }
}

test('every record is read back once, in order, as the very bytes of the broker\'s log segment (DumpLogSegments agrees)', { timeout: 120_000 }, async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 3 })
  await produceRounds(source, topic, 3, 6, round => 1 + round * 7)
  const ends = await endOffsets(source, topic)

  // A partition max smaller than most batches: answers end inside batches, which are fetched again whole (KIP-74).
  const recorder = new FetchRecorder()
  const fetcher = startFetcher(t, source.bootstrap, recorder, { partitionMaxBytes: 2_000 })
  for (const partition of [0, 1, 2]) fetcher.assign(topic, partition, 0n)
  await fetcher.start()
  await recorder.until(() => [0, 1, 2].every(p => recorder.positions.get(`${topic}-${p}`) === ends.get(p)), 'every partition read to its end')
  fetcher.checkInvariants()

  for (const partition of [0, 1, 2]) {
    const batches = recorder.batches.get(`${topic}-${partition}`) ?? []
    assert.equal(recorder.recordCount(topic, partition), ends.get(partition), `partition ${partition}: every record once`)
    assert.equal(batches[0]?.baseOffset, 0n)
    const segment = await readFile(join(source.dir, 'data', `${topic}-${partition}`, '00000000000000000000.log'))
    assert.ok(Buffer.concat(batches.map(batch => batch.bytes)).equals(segment), `partition ${partition}: the batches are the log segment, byte for byte`)
    const dumped = (await dumpLogSegment(source, topic, partition)).split('\n').filter(line => line.startsWith('baseOffset:')).map(line => {
      const field = (name: string): string => new RegExp(`\\b${name}: (\\S+)`).exec(line)![1]!
      return [BigInt(field('baseOffset')), BigInt(field('lastOffset')), Number(field('size')), Number(field('crc'))]
    })
    const ours = batches.map(batch => [batch.baseOffset, batch.lastOffset, batch.bytes.length, batch.bytes.readUInt32BE(BATCH_OFFSETS.crc)])
    assert.deepEqual(ours, dumped, `partition ${partition}: base offset, last offset, size and CRC of each batch as DumpLogSegments prints them`)
  }
  for (const response of recorder.responses) {
    assert.ok(response.retainedBytes >= response.responseBytes && response.responseBytes > response.batchBytes, 'every answer is counted whole')
  }
})

test('invariant D: the loop fetches one answer ahead while the last is held, hands it over once released, dropped when assign moved the position', async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source)
  await produceRounds(source, topic, 1, 4, () => 5)
  let release: (() => void) | undefined
  let answersHeld = 0
  const recorder = new FetchRecorder({
    contiguous: false,
    hold: () => new Promise<void>(resolve => { answersHeld++; release = resolve }),
  })
  const fetcher = startFetcher(t, source.bootstrap, recorder, { partitionMaxBytes: 1 })
  fetcher.assign(topic, 0, 0n)
  await fetcher.start()
  await recorder.until(() => recorder.responses.length === 1, 'the first answer')
  const requests = (): number => [...fetcher.counts.requestsByNode.values()].reduce((sum, count) => sum + count, 0)
  const answered = (): number => fetcher.counts.responseBytes
  // Held: the loop fetches the next answer meanwhile, and then waits for the held one to be released.
  const firstAnswerBytes = answered()
  // Nothing is handed over meanwhile, so the recorder hears nothing: polled.
  await waitUntil(() => requests() === 2 && answered() > firstAnswerBytes, { message: 'the answer fetched ahead' })
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(requests(), 2, 'no request past the one answer fetched ahead')
  assert.equal(answersHeld, 1, 'the answer fetched ahead is not handed over while the last one is held')
  assert.equal(recorder.batches.get(`${topic}-0`)?.length, 1, 'KIP-74: one whole batch though it is larger than the partition max')
  fetcher.assign(topic, 0, 15n)
  release!()
  await recorder.until(() => recorder.responses.length === 2, 'the answer after the release')
  assert.equal(recorder.positions.get(`${topic}-0`), 20n)
  release!()
  const offsets = (recorder.batches.get(`${topic}-0`) ?? []).map(batch => batch.baseOffset)
  assert.deepEqual(offsets, [0n, 15n], 'the batch at the new position, nothing between')
  fetcher.checkInvariants()
})

test('read_committed leaves out aborted transactions\' batches and the markers; read_uncommitted hands out every data batch', { timeout: 120_000 }, async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source)
  const client = createKafkaClient(source.connection('wire-fetch-txn'))
  const producer = client.producer({ transactionalId: `${topic}-txn`, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  t.after(() => producer.disconnect())
  const sendInTransaction = async (values: string[], outcome: 'commit' | 'abort'): Promise<void> => {
    const transaction = await producer.transaction()
    await transaction.send({ topic, messages: values.map(value => ({ value })) })
    await transaction[outcome]()
  }
  await sendInTransaction(['c1', 'c2'], 'commit')
  await sendInTransaction(['a1', 'a2', 'a3'], 'abort')
  await produce(source, topic, [{ value: 'plain' }])
  await sendInTransaction(['c3'], 'commit')
  await sendInTransaction(['a4'], 'abort')
  // c1 c2 (0-1) marker (2), a1-a3 (3-5) marker (6), plain (7), c3 (8) marker (9), a4 (10) marker (11).
  // EndTxn is answered once the coordinator logged the outcome; it writes the markers after that (KIP-98),
  // so the partition's end reaches 12 a moment after the last abort returned.
  const end = 12n
  await waitUntil(async () => (await endOffsets(source, topic)).get(0) === end, { message: 'the last abort\'s marker written' })

  const read = async (isolationLevel: 'read_committed' | 'read_uncommitted'): Promise<FetchRecorder> => {
    const recorder = new FetchRecorder({ contiguous: false })
    const fetcher = startFetcher(t, source.bootstrap, recorder, { isolationLevel })
    fetcher.assign(topic, 0, 0n)
    await fetcher.start()
    await recorder.until(() => recorder.positions.get(`${topic}-0`) === end, `${isolationLevel}: the whole partition`)
    fetcher.checkInvariants()
    await fetcher.stop()
    return recorder
  }
  const spans = (recorder: FetchRecorder): string[] => (recorder.batches.get(`${topic}-0`) ?? []).map(b => `${b.baseOffset}-${b.lastOffset}`)
  assert.deepEqual(spans(await read('read_committed')), ['0-1', '7-7', '8-8'], 'the committed batches and the plain one')
  assert.deepEqual(spans(await read('read_uncommitted')), ['0-1', '3-5', '7-7', '8-8', '10-10'], 'every data batch, no marker')
})

test('OFFSET_OUT_OF_RANGE is reported for the partition, which is then not fetched until assigned again', async t => {
  const { source } = await sharedClusters()
  const topic = await createTopic(t, source, { partitions: 2 })
  await produceRounds(source, topic, 2, 2, () => 3)
  await withAdmin(source, async admin => {
    await admin.fetchTopicMetadata({ topics: [topic] })
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: '4' }] })
  })
  const recorder = new FetchRecorder()
  const fetcher = startFetcher(t, source.bootstrap, recorder)
  fetcher.assign(topic, 0, 100n)
  fetcher.assign(topic, 1, 1n)
  await fetcher.start()
  await recorder.until(() => recorder.events.length === 2, 'two events')
  const events = recorder.events.map(e => [e.kind, e.partition, e.fetchOffset, e.error]).sort((a, b) => Number(a[1]) - Number(b[1]))
  assert.deepEqual(events, [['offset-out-of-range', 0, 100n, 'OFFSET_OUT_OF_RANGE'], ['offset-out-of-range', 1, 1n, 'OFFSET_OUT_OF_RANGE']])
  assert.equal(recorder.batches.size, 0)
  fetcher.assign(topic, 1, 4n)
  await recorder.until(() => recorder.positions.get(`${topic}-1`) === 6n, 'partition 1 from its log start offset')
  assert.equal(recorder.events.length, 2, 'partition 0 stays stopped, no new event')
  fetcher.checkInvariants()
})
