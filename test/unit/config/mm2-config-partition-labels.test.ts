import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { writeProperties } from '../../helpers/sidecar.js'

const mm1 = () => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2' }),
  whitelist: 'orders',
})
const mm2File = (extra: Record<string, string> = {}): string =>
  writeProperties(
    { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
    'mm2.properties'
  )

test('--metrics.partition.labels (and MIRROR_METRICS_PARTITION_LABELS) on the MirrorMaker 1 command line; default true', () => {
  assert.equal(configFromMm1(mm1()).metricsPartitionLabels, true)
  assert.equal(configFromMm1({ ...mm1(), 'metrics.partition.labels': 'false' }).metricsPartitionLabels, false)
  assert.equal(configFromMm1(mergeEnv(mm1(), { MIRROR_METRICS_PARTITION_LABELS: 'false' })).metricsPartitionLabels, false)
  assert.equal(
    configFromMm1(mergeEnv({ ...mm1(), 'metrics.partition.labels': 'true' }, { MIRROR_METRICS_PARTITION_LABELS: 'false' })).metricsPartitionLabels,
    true,
    'the flag wins'
  )
  assert.throws(() => configFromMm1({ ...mm1(), 'metrics.partition.labels': 'no' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, '--metrics.partition.labels "no": expected true or false')
    return true
  })
})

test('mm2.properties metrics.partition.labels, overridden by the sidecar flag; not reported as ignored', () => {
  const settings = (flags: Record<string, string>): ReturnType<typeof sidecarSettingsFromFlags> => sidecarSettingsFromFlags(flags, new ProblemList())
  assert.equal(configFromMm2(mm2File(), { settings: settings({}) }).metricsPartitionLabels, true)
  const fromFile = configFromMm2(mm2File({ 'metrics.partition.labels': 'false' }), { settings: settings({}) })
  assert.equal(fromFile.metricsPartitionLabels, false)
  assert.deepEqual(fromFile.ignoredKeys, [])
  assert.equal(
    configFromMm2(mm2File({ 'metrics.partition.labels': 'false' }), { settings: settings({ 'metrics.partition.labels': 'true' }) }).metricsPartitionLabels,
    true
  )
  assert.throws(
    () => configFromMm2(mm2File({ 'metrics.partition.labels': 'off' }), { settings: settings({}) }),
    /metrics\.partition\.labels "off": expected true or false/
  )
})
