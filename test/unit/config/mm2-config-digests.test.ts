import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { isInternalTopic } from '../../../src/config/topic-filter.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const mm1 = () => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders',
})

test('--digests.*: off by default; on with its topic, range size and audit settings; MIRROR_DIGESTS_ENABLED works too', () => {
  assert.deepEqual(configFromMm1(mm1()).flows[0]?.digests, {
    enabled: false,
    topic: 'mirror-digests.source.internal',
    rangeRecords: 1000,
    replicationFactor: -1,
    auditIntervalMs: 0,
    auditMaxRecords: 10_000,
  })
  const on = configFromMm1({
    ...mm1(),
    'digests.enabled': 'true',
    'digests.range.records': '500',
    'digests.audit.interval.ms': '60000',
    'digests.audit.max.records': '2000',
  }).flows[0]?.digests
  assert.deepEqual(on, {
    enabled: true,
    topic: 'mirror-digests.source.internal',
    rangeRecords: 500,
    replicationFactor: -1,
    auditIntervalMs: 60_000,
    auditMaxRecords: 2000,
  })
  assert.equal(configFromMm1(mergeEnv(mm1(), { MIRROR_DIGESTS_ENABLED: 'true' })).flows[0]?.digests?.enabled, true)
})

test('--digests.* mistakes are named, all at once, before anything connects', () => {
  assert.throws(() => configFromMm1({ ...mm1(), 'digests.enabled': 'yes please' }), /--digests\.enabled "yes please": expected true or false/)
  assert.throws(() => configFromMm1({ ...mm1(), 'digests.enabled': 'true', 'digests.range.records': '0' }), /--digests\.range\.records "0"/)
  assert.throws(
    () => configFromMm1({ ...mm1(), 'digests.audit.interval.ms': '1000' }),
    /--digests\.audit\.interval\.ms "1000": the audit compares the target with the digests the mirror writes; add --digests\.enabled true, or leave the interval at 0/
  )
  assert.throws(
    () => configFromMm1({ ...mm1(), 'digests.enabled': 'true', 'digests.audit.max.records': '10' }),
    /--digests\.audit\.max\.records "10": below --digests\.range\.records 1000: a pass could not re-read one digest; give at least 1000/
  )
})

test('mm2.properties digests.* per flow; the digests topic is internal (never mirrored)', () => {
  const file = writeProperties(
    {
      clusters: 'A, B',
      'A.bootstrap.servers': '127.0.0.1:1',
      'B.bootstrap.servers': '127.0.0.1:2',
      'A->B.enabled': 'true',
      'A->B.digests.enabled': 'true',
      'digests.audit.interval.ms': '30000',
    },
    'mm2.properties'
  )
  const settings = sidecarSettingsFromFlags({}, new ProblemList())
  const digests = configFromMm2(file, { settings }).flows[0]?.digests
  assert.deepEqual([digests?.enabled, digests?.topic, digests?.auditIntervalMs], [true, 'mirror-digests.A.internal', 30_000])
  assert.ok(isInternalTopic('mirror-digests.A.internal'))
  assert.ok(!isInternalTopic('mirror-digests'))
})
