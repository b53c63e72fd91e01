import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FetchSession } from '../../../../src/kafka/fetch-session.js'
import { encodeMessage } from '../../../../src/kafka/wire/message-codec.js'
import { fetchRequest, responseTopicName, sessionResponse, wantedPartitions } from '../../../../src/kafka/wire/fetch-request-builder.js'
import { IsolationLevel } from '../../../../src/kafka/wire/fetched-batches.js'
import { FETCH_REQUEST } from '../../../../src/kafka/wire/schemas/fetch-request.js'
import type { ClaimedPartition } from '../../../../src/kafka/wire/fetch-assignments.js'

const settings = { maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, partitionMaxBytes: 1 << 16, isolationLevel: IsolationLevel.READ_COMMITTED, rackId: 'rack-b' }
const TOPIC_ID = 'AAECAwQFBgcICQoLDA0ODw'

function claimed (partition: number, position: bigint, currentLeaderEpoch = 2, lastFetchedEpoch = -1): ClaimedPartition {
  return { topic: 'orders', partition, position, currentLeaderEpoch, lastFetchedEpoch, generation: 0 }
}

test('a full request carries every partition with its leader epoch (KIP-320) and the rack (KIP-392); by name to v12, by topic id from v13', () => {
  const session = new FetchSession()
  const request = session.next(wantedPartitions([claimed(0, 5n), claimed(1, 9n, 2, 1)], settings.partitionMaxBytes))
  assert.equal(request.full, true)
  const body = fetchRequest(request.fields, settings, new Map([['orders', TOPIC_ID]]))
  assert.deepEqual(body.topics[0]!.partitions.map(p => [p.partition, p.fetchOffset, p.currentLeaderEpoch, p.lastFetchedEpoch, p.partitionMaxBytes]), [
    [0, 5n, 2, -1, 1 << 16],
    [1, 9n, 2, 1, 1 << 16],
  ])
  assert.equal(body.rackId, 'rack-b')
  assert.equal(body.isolationLevel, 1)
  const v12 = encodeMessage(FETCH_REQUEST, 12, body).toBuffer()
  const v13 = encodeMessage(FETCH_REQUEST, 13, body).toBuffer()
  assert.ok(v12.includes(Buffer.from('orders')) && !v13.includes(Buffer.from('orders')), 'the name up to v12, not from v13')
  assert.ok(v13.includes(Buffer.from(TOPIC_ID, 'base64url')), 'the topic id from v13')
})

test('an incremental request carries only the partitions whose offset or leader epoch moved, and those forgotten (KIP-227)', () => {
  const session = new FetchSession()
  const first = session.next(wantedPartitions([claimed(0, 5n), claimed(1, 9n), claimed(2, 0n)], 100))
  const topicNames = new Map<string, string>()
  assert.equal(first.completed(sessionResponse({ throttleTimeMs: 0, errorCode: 0, sessionId: 42, responses: [] }, topicNames)), true)
  const next = session.next(wantedPartitions([claimed(0, 5n), claimed(1, 9n, 3)], 100))
  assert.equal(next.full, false)
  assert.deepEqual(next.fields.topics.flatMap(t => t.partitions.map(p => [p.partition, p.currentLeaderEpoch])), [[1, 3]])
  assert.deepEqual(next.fields.forgottenTopics, [{ topic: 'orders', partitions: [2] }])
  assert.deepEqual([next.fields.sessionId, next.fields.sessionEpoch], [42, 1])
  // FETCH_SESSION_ID_NOT_FOUND: the answer is dropped and the next request is a full one, outside the old session.
  assert.equal(next.completed(sessionResponse({ throttleTimeMs: 0, errorCode: 70, sessionId: 0, responses: [] }, topicNames)), false)
  const again = session.next(wantedPartitions([claimed(0, 5n), claimed(1, 9n, 3)], 100))
  assert.deepEqual([again.full, again.fields.sessionId, again.fields.sessionEpoch, again.fields.topics[0]!.partitions.length], [true, 0, 0, 2])
})

test('answers name topics by name or by topic id; an unknown id reads as a partition the session does not hold', () => {
  const names = new Map([[TOPIC_ID, 'orders']])
  assert.equal(responseTopicName({ topic: '', topicId: TOPIC_ID }, names), 'orders')
  assert.equal(responseTopicName({ topic: 'payments' }, names), 'payments')
  assert.equal(responseTopicName({ topicId: 'unknown' }, names), undefined)
  const session = new FetchSession()
  const first = session.next(wantedPartitions([claimed(0, 0n)], 100))
  first.completed({ errorCode: 0, sessionId: 9, responses: [] })
  const next = session.next(wantedPartitions([claimed(0, 1n)], 100))
  const answer = sessionResponse({ throttleTimeMs: 0, errorCode: 0, sessionId: 9, responses: [{ topicId: 'BBBBBBBBBBBBBBBBBBBBBB', partitions: [] }] }, names)
  assert.equal(next.completed({ ...answer, responses: answer.responses.map(r => ({ ...r, partitions: [{ partition: 0 }] })) }), false)
})
