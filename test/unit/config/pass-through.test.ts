import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const mm1 = (consumer: Record<string, string> = {}, producer: Record<string, string> = {}) => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1', ...consumer })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2', ...producer }),
  whitelist: 'orders',
})
const flow = (config: ReturnType<typeof configFromMm1>) => config.flows[0]

test('--pass.through (and MIRROR_PASS_THROUGH, shallowiterator.enable): auto by default, on/off, true/false; contradictions are named', () => {
  assert.equal(flow(configFromMm1(mm1()))?.passThrough, 'auto')
  assert.equal(flow(configFromMm1({ ...mm1(), 'pass.through': 'off' }))?.passThrough, 'off')
  assert.equal(flow(configFromMm1({ ...mm1(), 'pass.through': 'TRUE' }))?.passThrough, 'on')
  assert.equal(flow(configFromMm1(mergeEnv(mm1(), { MIRROR_PASS_THROUGH: 'off' })))?.passThrough, 'off')
  assert.equal(flow(configFromMm1(mm1({ 'shallowiterator.enable': 'false' })))?.passThrough, 'off', 'MirrorMaker 0.7 consumer key')
  assert.equal(flow(configFromMm1(mm1({ 'shallowiterator.enable': 'true' })))?.passThrough, 'on')
  assert.deepEqual(configFromMm1(mm1({ 'shallowiterator.enable': 'true' })).ignoredKeys, [], 'the key is read, not reported as ignored')
  assert.throws(() => configFromMm1({ ...mm1(), 'pass.through': 'sometimes' }), /--pass\.through "sometimes": expected auto, on or off/)
  assert.throws(
    () => configFromMm1({ ...mm1({ 'shallowiterator.enable': 'true' }), 'pass.through': 'off' }),
    /shallowiterator\.enable "true": contradicts --pass\.through=off; remove one of them/
  )
})

test('compression.type set on the producer is what forwarded batches must be in; unset keeps each batch\'s codec', () => {
  assert.equal(flow(configFromMm1(mm1()))?.producer.compressionSet, false)
  const set = flow(configFromMm1(mm1({}, { 'compression.type': 'lz4' })))
  assert.equal(set?.producer.compressionSet, true)
  assert.equal(set?.producer.compression, 'lz4')
})

test('mm2.properties pass.through per flow, and the source consumer\'s shallowiterator.enable', () => {
  const file = (extra: Record<string, string>): string =>
    writeProperties(
      { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
      'mm2.properties'
    )
  const settings = sidecarSettingsFromFlags({}, new ProblemList())
  assert.equal(configFromMm2(file({}), { settings }).flows[0]?.passThrough, 'auto')
  const off = configFromMm2(file({ 'A->B.pass.through': 'off' }), { settings })
  assert.equal(off.flows[0]?.passThrough, 'off')
  assert.deepEqual(off.ignoredKeys, [])
  assert.equal(configFromMm2(file({ 'pass.through': 'on' }), { settings }).flows[0]?.passThrough, 'on')
  assert.equal(configFromMm2(file({ 'A.consumer.shallowiterator.enable': 'false' }), { settings }).flows[0]?.passThrough, 'off')
})
