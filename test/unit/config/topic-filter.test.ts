import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compileTopicPattern, createTopicFilter, isInternalTopic } from '../../../src/config/topic-filter.js'
import { ProblemList } from '../../../src/config/values.js'

function filter (include: string, exclude?: string): (topic: string) => boolean {
  const problems = new ProblemList()
  const inc = compileTopicPattern('--whitelist', include, problems)
  const exc = exclude === undefined ? undefined : compileTopicPattern('--blacklist', exclude, problems)
  assert.deepEqual(problems.problems, [])
  return createTopicFilter(inc as RegExp, exc, include, exclude).matches
}

test('a comma means "or" and the whole topic name must match, as in MirrorMaker', () => {
  const matches = filter('orders.*, payments')
  assert.equal(matches('orders'), true)
  assert.equal(matches('orders-eu'), true)
  assert.equal(matches('payments'), true)
  assert.equal(matches('payments-v2'), false)
  assert.equal(matches('my-orders'), false)
})

test('exclude wins over include; internal and mirror topics are never matched', () => {
  const matches = filter('.*', '.*-internal')
  assert.equal(matches('orders'), true)
  assert.equal(matches('orders-internal'), false)
  for (const topic of [
    '__consumer_offsets',
    '__transaction_state',
    'mirror-offset-syncs.source.internal',
    'mirror-checkpoints.a.internal',
    'mm2-offset-syncs.b.internal',
  ]) {
    assert.equal(isInternalTopic(topic), true, topic)
    assert.equal(matches(topic), false, topic)
  }
})

test('invalid and Java-only patterns are reported with the flag and the value', () => {
  for (const [pattern, message] of [
    ['orders(', /not a valid regex/],
    ['(?i)orders', /Java-only regex syntax/],
    ['a*+', /Java-only/],
    [' ', /expected a topic regex/],
  ] as const) {
    const problems = new ProblemList()
    assert.equal(compileTopicPattern('--whitelist', pattern, problems), undefined)
    assert.equal(problems.problems.length, 1)
    assert.equal(problems.problems[0]?.key, '--whitelist')
    assert.equal(problems.problems[0]?.value, pattern)
    assert.match(problems.problems[0]?.message ?? '', message)
  }
})
