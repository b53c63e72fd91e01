import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  FETCH_SESSION_ID_NOT_FOUND,
  FetchSession,
  FetchSessions,
  INVALID_FETCH_SESSION_EPOCH,
  type FetchSessionResponse,
  type FetchTopicRequest,
} from '../../../src/kafka/fetch-session.js'

const wanted = (offsets: Record<string, number[]>): FetchTopicRequest[] =>
  Object.entries(offsets).map(([topic, list]) => ({
    topic,
    partitions: list.map((offset, partition) => ({ partition, fetchOffset: String(offset), maxBytes: 100 })),
  }))

const answer = (sessionId: number, partitions: Record<string, number[]> = {}, errorCode = 0): FetchSessionResponse => ({
  errorCode,
  sessionId,
  responses: Object.entries(partitions).map(([topicName, list]) => ({ topicName, partitions: list.map(partition => ({ partition })) })),
})

const sent = (topics: readonly FetchTopicRequest[]): string[] =>
  topics.flatMap(({ topic, partitions }) => partitions.map(p => `${topic}/${p.partition}@${p.fetchOffset}`)).sort()

test('the first request is full and opens a session; the next ones send only what changed, with the epoch counting up', () => {
  const session = new FetchSession()
  const first = session.next(wanted({ a: [0, 0], b: [5] }))
  assert.equal(first.full, true)
  assert.deepEqual({ id: first.fields.sessionId, epoch: first.fields.sessionEpoch }, { id: 0, epoch: 0 })
  assert.deepEqual(sent(first.fields.topics), ['a/0@0', 'a/1@0', 'b/0@5'])
  assert.equal(first.completed(answer(77, { a: [0, 1], b: [0] })), true)
  assert.deepEqual({ id: session.sessionId, epoch: session.epoch }, { id: 77, epoch: 1 })

  const idle = session.next(wanted({ a: [0, 0], b: [5] }))
  assert.equal(idle.full, false)
  assert.deepEqual({ id: idle.fields.sessionId, epoch: idle.fields.sessionEpoch }, { id: 77, epoch: 1 })
  assert.deepEqual(idle.fields.topics, [])
  assert.deepEqual(idle.fields.forgottenTopics, [])
  assert.equal(idle.completed(answer(77)), true)

  const moved = session.next(wanted({ a: [0, 12], b: [5] }))
  assert.equal(moved.fields.sessionEpoch, 2)
  assert.deepEqual(sent(moved.fields.topics), ['a/1@12'])
  assert.equal(moved.completed(answer(77, { a: [1] })), true)
  assert.equal(session.epoch, 3)
  assert.deepEqual(session.counts, { full: 1, incremental: 2, resets: 0, sessionless: 0 })
})

test('partitions no longer wanted are forgotten, new ones are added, and a forgotten one comes back as new', () => {
  const session = new FetchSession()
  session.next(wanted({ a: [0, 0], b: [0] })).completed(answer(9, { a: [0, 1], b: [0] }))
  const dropped = session.next(wanted({ a: [0], c: [3] }))
  assert.deepEqual(sent(dropped.fields.topics), ['c/0@3'])
  assert.deepEqual(dropped.fields.forgottenTopics, [{ topic: 'a', partitions: [1] }, { topic: 'b', partitions: [0] }])
  assert.equal(dropped.completed(answer(9)), true)
  const back = session.next(wanted({ a: [0, 0], c: [3] }))
  assert.deepEqual(sent(back.fields.topics), ['a/1@0'])
  assert.deepEqual(back.fields.forgottenTopics, [])
})

test('FETCH_SESSION_ID_NOT_FOUND drops the answer and the next request is a full one in a new session', () => {
  const session = new FetchSession()
  session.next(wanted({ a: [0, 0] })).completed(answer(5, { a: [0, 1] }))
  const lost = session.next(wanted({ a: [4, 0] }))
  assert.equal(lost.completed(answer(0, {}, FETCH_SESSION_ID_NOT_FOUND)), false)
  const again = session.next(wanted({ a: [4, 0] }))
  assert.equal(again.full, true)
  assert.deepEqual({ id: again.fields.sessionId, epoch: again.fields.sessionEpoch }, { id: 0, epoch: 0 })
  assert.deepEqual(sent(again.fields.topics), ['a/0@4', 'a/1@0'])
  assert.equal(again.completed(answer(6, { a: [0, 1] })), true)
  assert.deepEqual({ id: session.sessionId, epoch: session.epoch }, { id: 6, epoch: 1 })
  assert.equal(session.counts.resets, 1)
})

test('INVALID_FETCH_SESSION_EPOCH, a failed request or a partition outside the session close the session: a full request naming it, epoch 0', () => {
  for (const end of ['epoch', 'failed', 'stranger'] as const) {
    const session = new FetchSession()
    session.next(wanted({ a: [0] })).completed(answer(5, { a: [0] }))
    const request = session.next(wanted({ a: [1] }))
    if (end === 'epoch') assert.equal(request.completed(answer(0, {}, INVALID_FETCH_SESSION_EPOCH)), false)
    else if (end === 'stranger') assert.equal(request.completed(answer(5, { z: [0] })), false)
    else request.failed()
    const again = session.next(wanted({ a: [1] }))
    assert.equal(again.full, true, end)
    assert.deepEqual({ id: again.fields.sessionId, epoch: again.fields.sessionEpoch }, { id: 5, epoch: 0 }, end)
    assert.deepEqual(sent(again.fields.topics), ['a/0@1'], end)
  }
})

test('the broker closing the session (session id 0 in an incremental answer) or making none keeps the answer; the next request is full', () => {
  const session = new FetchSession()
  const first = session.next(wanted({ a: [0] }))
  assert.equal(first.completed(answer(0, { a: [0] })), true)
  assert.equal(session.next(wanted({ a: [0] })).full, true)
  const other = new FetchSession()
  other.next(wanted({ a: [0] })).completed(answer(3, { a: [0] }))
  assert.equal(other.next(wanted({ a: [2] })).completed(answer(0, { a: [0] })), true)
  const next = other.next(wanted({ a: [2] }))
  assert.deepEqual({ full: next.full, id: next.fields.sessionId, epoch: next.fields.sessionEpoch }, { full: true, id: 0, epoch: 0 })
})

test('a request built while another is in flight goes outside the session and leaves it untouched; a broker without sessions gets plain full requests', () => {
  const session = new FetchSession()
  const first = session.next(wanted({ a: [0] }))
  const second = session.next(wanted({ a: [0] }))
  assert.deepEqual({ full: second.full, id: second.fields.sessionId, epoch: second.fields.sessionEpoch }, { full: true, id: 0, epoch: -1 })
  assert.equal(second.completed(answer(0, { a: [0] })), true)
  assert.equal(first.completed(answer(8, { a: [0] })), true)
  assert.equal(first.completed(answer(8, { a: [0] })), false, 'an answer counts once')
  assert.deepEqual({ id: session.sessionId, epoch: session.epoch }, { id: 8, epoch: 1 })

  const old = new FetchSession()
  assert.equal(old.next(wanted({ a: [0] })).completed({ responses: [{ topicName: 'a', partitions: [{ partition: 0 }] }] }), true)
  const plain = old.next(wanted({ a: [3] }))
  assert.deepEqual({ full: plain.full, epoch: plain.fields.sessionEpoch, sent: sent(plain.fields.topics) }, { full: true, epoch: -1, sent: ['a/0@3'] })
})

test('the epoch counts up once per answer, and sessions are kept per broker with shared counts', () => {
  const session = new FetchSession()
  session.next(wanted({ a: [0] })).completed(answer(1, { a: [0] }))
  for (let i = 0; i < 3; i++) session.next(wanted({ a: [0] })).completed(answer(1))
  assert.equal(session.epoch, 4)
  const sessions = new FetchSessions()
  assert.equal(sessions.forNode(1), sessions.forNode('1'))
  assert.notEqual(sessions.forNode(1), sessions.forNode(2))
  sessions.forNode(1).next(wanted({ a: [0] })).completed(answer(4, { a: [0] }))
  sessions.forNode(2).next(wanted({ b: [0] })).completed(answer(4, { b: [0] }))
  assert.equal(sessions.counts.full, 2)
})

test('the same request array again is an incremental request naming nothing; after a session error it is sent whole again', () => {
  const session = new FetchSession()
  const request = wanted({ a: [3, 4], b: [5] })
  assert.equal(session.next(request).completed(answer(9, { a: [0, 1], b: [0] })), true)
  const again = session.next(request)
  assert.equal(again.full, false)
  assert.deepEqual(
    { epoch: again.fields.sessionEpoch, topics: again.fields.topics, forgotten: again.fields.forgottenTopics },
    { epoch: 1, topics: [], forgotten: [] }
  )
  assert.equal(again.completed(answer(9, { b: [0] })), true)
  // A new array is looked into: what moved is sent, what is gone is forgotten.
  const movedRequest = wanted({ a: [3, 8] })
  const moved = session.next(movedRequest)
  assert.deepEqual(sent(moved.fields.topics), ['a/1@8'])
  assert.deepEqual(moved.fields.forgottenTopics, [{ topic: 'b', partitions: [0] }])
  assert.equal(moved.completed(answer(9, {}, INVALID_FETCH_SESSION_EPOCH)), false)
  // The same array after the error: a full request with every partition of it.
  const afterError = session.next(movedRequest)
  assert.equal(afterError.full, true)
  assert.deepEqual(sent(afterError.fields.topics), ['a/0@3', 'a/1@8'])
  assert.equal(afterError.completed(answer(10)), true)
  const idle = session.next(movedRequest)
  assert.deepEqual({ full: idle.full, epoch: idle.fields.sessionEpoch, topics: idle.fields.topics }, { full: false, epoch: 1, topics: [] })
  assert.deepEqual(session.counts, { full: 2, incremental: 3, resets: 1, sessionless: 0 })
})
