import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const mm1 = () => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders',
})

test('--corrupt.batches (and MIRROR_CORRUPT_BATCHES): fail by default, skip on request; anything else is one line naming flag, value and choices', () => {
  assert.equal(configFromMm1(mm1()).flows[0]?.corruptBatches, 'fail')
  assert.equal(configFromMm1({ ...mm1(), 'corrupt.batches': 'skip' }).flows[0]?.corruptBatches, 'skip')
  assert.equal(configFromMm1(mergeEnv(mm1(), { MIRROR_CORRUPT_BATCHES: 'SKIP' })).flows[0]?.corruptBatches, 'skip')
  assert.throws(() => configFromMm1({ ...mm1(), 'corrupt.batches': 'ignore' }), /^.*--corrupt\.batches "ignore": expected one of fail, skip$/m)
})

test('mm2.properties corrupt.batches, top level and per flow', () => {
  const file = (extra: Record<string, string>): string =>
    writeProperties(
      { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
      'mm2.properties'
    )
  const settings = sidecarSettingsFromFlags({}, new ProblemList())
  assert.equal(configFromMm2(file({}), { settings }).flows[0]?.corruptBatches, 'fail')
  assert.equal(configFromMm2(file({ 'corrupt.batches': 'skip' }), { settings }).flows[0]?.corruptBatches, 'skip')
  const perFlow = configFromMm2(file({ 'corrupt.batches': 'skip', 'A->B.corrupt.batches': 'fail' }), { settings })
  assert.equal(perFlow.flows[0]?.corruptBatches, 'fail')
  assert.deepEqual(perFlow.ignoredKeys, [])
  assert.throws(() => configFromMm2(file({ 'A->B.corrupt.batches': 'maybe' }), { settings }), /A->B\.corrupt\.batches "maybe": expected one of fail, skip/)
})
