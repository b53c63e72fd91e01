import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { editDistance } from '../../../src/shared/edit-distance.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { writeProperties } from '../../helpers/sidecar.js'

const BASE = {
  clusters: 'A, B',
  'A.bootstrap.servers': 'a.example.com:9092',
  'B.bootstrap.servers': 'b.example.com:9092',
  'A->B.enabled': 'true',
}

/** The problems of an mm2.properties file with `entries` added to a valid one, as `key: message` lines. */
function problemsOf (entries: Record<string, string>): string[] {
  const file = writeProperties({ ...BASE, ...entries }, 'mm2.properties')
  try {
    configFromMm2(file, { settings: sidecarSettingsFromFlags({}, new ProblemList()) })
    return []
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error))
    return error.problems.map(p => `${p.key}: ${p.message}`)
  }
}

test('a misspelled mm2.properties key is refused with the key it was meant to be', () => {
  const did = (key: string, meant: string): string => `${key}: is not a key that is read (it would be ignored); did you mean ${meant}?`
  assert.deepEqual(problemsOf({ 'A->B.topic': 'orders' }), [did('A->B.topic', 'A->B.topics')])
  assert.deepEqual(problemsOf({ 'A->B.sync.group.offsets.enabeld': 'true' }), [did('A->B.sync.group.offsets.enabeld', 'A->B.sync.group.offsets.enabled')])
  assert.deepEqual(problemsOf({ 'B.client.di': 'mirror' }), [did('B.client.di', 'B.client.id')])
  assert.deepEqual(problemsOf({ 'topics.exclud': 'x' }), [did('topics.exclud', 'topics.exclude')])
  assert.deepEqual(problemsOf({ 'emit.checkpoint.enabled': 'false' }), [did('emit.checkpoint.enabled', 'emit.checkpoints.enabled')])
})

test('without clusters nothing is guessed: alias keys are not taken for slips of top-level keys', () => {
  const file = writeProperties({ 'A.bootstrap.servers': 'a.example.com:9092', 'B.bootstrap.servers': 'b.example.com:9092' }, 'mm2.properties')
  const problems = (() => {
    try {
      configFromMm2(file, { settings: sidecarSettingsFromFlags({}, new ProblemList()) })
      return []
    } catch (error) {
      return (error as ConfigError).problems.map(p => p.key)
    }
  })()
  assert.deepEqual(problems, ['clusters'])
})

test('keys MirrorMaker 2 and Connect read and the sidecar does not, and keys far from any, stay warnings', () => {
  const file = writeProperties({
    ...BASE,
    'config.storage.replication.factor': '1',
    'key.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
    'refresh.groups.interval.seconds': '600',
    'A->B.topics.include': 'x',
    'A.consumer.max.poll.interval.ms': '300000',
    'C.bootstrap.servers': 'c.example.com:9092',
  }, 'mm2.properties')
  const config = configFromMm2(file, { settings: sidecarSettingsFromFlags({}, new ProblemList()) })
  assert.deepEqual(config.ignoredKeys, [
    'A->B.topics.include',
    'A.consumer.max.poll.interval.ms',
    'C.bootstrap.servers',
    'config.storage.replication.factor',
    'key.converter',
    'refresh.groups.interval.seconds',
  ])
})

test('edit distance: two swapped neighbours are one edit', () => {
  assert.equal(editDistance('enabeld', 'enabled'), 1)
  assert.equal(editDistance('topic', 'topics'), 1)
  assert.equal(editDistance('topics.include', 'topics.exclude'), 2)
  assert.equal(editDistance('', 'lag'), 3)
})
