import assert from 'node:assert/strict'
import { test } from 'node:test'
import { consumerSettingsFromProperties } from '../../../src/config/client-properties.js'
import { parseProperties } from '../../../src/config/java-properties.js'
import { ProblemList } from '../../../src/config/values.js'

const settings = (text: string): { consumer: ReturnType<typeof consumerSettingsFromProperties>, problems: ProblemList } => {
  const problems = new ProblemList()
  return { consumer: consumerSettingsFromProperties(parseProperties(text, 'c.properties'), 'c.properties:', problems), problems }
}

test('fetch.max.wait.ms and fetch.min.bytes: Java defaults, read when set, not listed as ignored', () => {
  const defaults = settings('bootstrap.servers=a:9092\n')
  assert.equal(defaults.consumer.fetchMaxWaitMs, 500)
  assert.equal(defaults.consumer.fetchMinBytes, 1)
  const set = settings('fetch.max.wait.ms=5000\nfetch.min.bytes=1024\n')
  assert.deepEqual(set.problems.problems, [])
  assert.deepEqual(set.problems.ignored, [])
  assert.equal(set.consumer.fetchMaxWaitMs, 5000)
  assert.equal(set.consumer.fetchMinBytes, 1024)
})

test('fetch.max.wait.ms at or above session.timeout.ms is refused, naming both keys', () => {
  const { problems } = settings('fetch.max.wait.ms=10000\nsession.timeout.ms=10000\n')
  assert.equal(problems.problems.length, 1)
  assert.equal(problems.problems[0]?.key, 'c.properties:fetch.max.wait.ms')
  assert.equal(problems.problems[0]?.value, '10000')
  assert.match(problems.problems[0]?.message ?? '', /below session\.timeout\.ms \(10000\)/)
  const bad = settings('fetch.min.bytes=0\n')
  assert.equal(bad.problems.problems[0]?.key, 'c.properties:fetch.min.bytes')
})

test('fetch.sessions.enable: on by default, false read, anything else refused naming the key', () => {
  assert.equal(settings('bootstrap.servers=a:9092\n').consumer.fetchSessions, true)
  const off = settings('fetch.sessions.enable=false\n')
  assert.deepEqual(off.problems.problems, [])
  assert.deepEqual(off.problems.ignored, [])
  assert.equal(off.consumer.fetchSessions, false)
  const bad = settings('fetch.sessions.enable=sometimes\n')
  assert.equal(bad.problems.problems[0]?.key, 'c.properties:fetch.sessions.enable')
  assert.equal(bad.problems.problems[0]?.value, 'sometimes')
})
