import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FetchRecorder, startFetcher } from '../helpers/fetch-recorder.js'
import { createTopic, endOffsets, produce, sharedClusters } from '../helpers/kafka.js'
import { waitUntil } from '../helpers/wait.js'

const PARTITIONS = 500

test('KIP-227 at 500 partitions: incremental requests are a small fraction of full ones; a broker restart mid-session loses and repeats nothing',
  { timeout: 300_000 }, async t => {
    const { source } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: PARTITIONS })
    const onePerPartition = (round: number): Array<{ partition: number, value: string }> =>
      Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: `round ${round} partition ${partition}` }))
    // A just-created partition may answer NOT_LEADER_OR_FOLLOWER for a while: sent again until the producer gets through
    // (a record written twice then is in the log, and read back as the log holds it).
    const produceRound = (round: number): Promise<void> =>
      waitUntil(async () => { await produce(source, topic, onePerPartition(round)); return true }, { message: `round ${round} produced` })
    await produceRound(0)
    let ends = await endOffsets(source, topic)
    const allAtEnd = (recorder: FetchRecorder): boolean =>
      Array.from({ length: PARTITIONS }, (_, p) => recorder.positions.get(`${topic}-${p}`) === ends.get(p))
        .every(Boolean)

    const recorder = new FetchRecorder()
    const fetcher = startFetcher(t, source.bootstrap, recorder)
    const plainRecorder = new FetchRecorder()
    const plain = startFetcher(t, source.bootstrap, plainRecorder, { fetchSessions: false })
    for (let p = 0; p < PARTITIONS; p++) {
      fetcher.assign(topic, p, 0n)
      plain.assign(topic, p, 0n)
    }
    await Promise.all([fetcher.start(), plain.start()])
    await Promise.all([recorder, plainRecorder].map(each => each.until(() => allAtEnd(each), 'every partition read')))
    // The requests sent while the last responses were applied name the partitions whose fetch offsets moved (the
    // reads of the last round can end over two responses); three requests on, they ask for nothing new (each waits
    // maxWaitMs on the broker).
    const counts = fetcher.counts
    const caughtUp = counts.sessions.incremental + 3
    await waitUntil(() => counts.sessions.incremental >= caughtUp, { message: 'the request that moves every fetch offset' })
    const before = { incremental: counts.sessions.incremental, bytes: counts.incrementalRequestBytes }
    await waitUntil(() => counts.sessions.incremental >= before.incremental + 10 && plain.counts.sessions.sessionless >= 10, {
      message: 'ten more requests of each fetcher',
    })
    const fullBytes = counts.fullRequestBytes / counts.sessions.full
    const incrementalBytes = (counts.incrementalRequestBytes - before.bytes) / (counts.sessions.incremental - before.incremental)
    const plainBytes = plain.counts.fullRequestBytes / plain.counts.sessions.sessionless
    t.diagnostic(`request bytes: full ${fullBytes.toFixed(0)}, incremental ${incrementalBytes.toFixed(0)} (caught up), ` +
      `without sessions ${plainBytes.toFixed(0)}`)
    assert.ok(fullBytes > 5_000, `a full request names 500 partitions (${fullBytes} bytes)`)
    assert.ok(incrementalBytes * 20 < fullBytes, `incremental ${incrementalBytes} bytes, full ${fullBytes}`)
    assert.ok(plainBytes > fullBytes * 0.9, 'without sessions every request is a full one')
    await plain.stop()

    const fullBefore = counts.sessions.full
    await source.pause()
    await source.resume()
    await produceRound(1)
    ends = await endOffsets(source, topic)
    await recorder.until(() => allAtEnd(recorder), 'every partition read after the restart', 120_000)
    assert.ok(counts.sessions.full > fullBefore, 'a new session after the restart')
    for (let p = 0; p < PARTITIONS; p++) {
      // The recorder checked that each partition's batches follow each other without gap or overlap.
      assert.equal(recorder.recordCount(topic, p), ends.get(p), `partition ${p}: each record once`)
      assert.ok(ends.get(p)! >= 2n)
    }
    fetcher.checkInvariants()
  })
