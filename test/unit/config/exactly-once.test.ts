import assert from 'node:assert/strict'
import { test } from 'node:test'
import { configFromMm1, mergeEnv } from '../../../src/config/mm1-args.js'
import { configFromMm2 } from '../../../src/config/mm2-config.js'
import { sidecarSettingsFromFlags } from '../../../src/config/sidecar-settings.js'
import { ProblemList } from '../../../src/config/values.js'
import { writeProperties } from '../../helpers/sidecar.js'

const mm1 = (producer: Record<string, string> = {}) => ({
  'consumer.config': [writeProperties({ 'bootstrap.servers': '127.0.0.1:1', 'group.id': 'g' })],
  'producer.config': writeProperties({ 'bootstrap.servers': '127.0.0.1:2', ...producer }),
  whitelist: 'orders',
})

test('--exactly.once (and MIRROR_EXACTLY_ONCE): off by default; on, it names the positions topic and the commit interval', () => {
  assert.equal(configFromMm1(mm1()).flows[0]?.exactlyOnce, undefined)
  const on = configFromMm1({ ...mm1(), 'exactly.once': 'true' }).flows[0]?.exactlyOnce
  assert.deepEqual(on, {
    key: '--exactly.once',
    commitIntervalMs: 100,
    transactionTimeoutMs: 60_000,
    positionsTopic: 'mirror-positions.source.internal',
    positionsReplicationFactor: -1,
  })
  assert.equal(
    configFromMm1(mergeEnv(mm1(), { MIRROR_EXACTLY_ONCE: 'true', MIRROR_EXACTLY_ONCE_COMMIT_INTERVAL_MS: '250' })).flows[0]?.exactlyOnce?.commitIntervalMs,
    250
  )
  assert.throws(() => configFromMm1({ ...mm1(), 'exactly.once': 'yes please' }), /--exactly\.once "yes please"/)
})

test('exactly-once with settings that contradict it is refused, naming the key, its value and what to do', () => {
  assert.throws(
    () => configFromMm1({ ...mm1({ 'enable.idempotence': 'false' }), 'exactly.once': 'true' }),
    /enable\.idempotence "false": contradicts --exactly\.once: transactions need the idempotent producer/
  )
  // Without exactly-once the same setting is fine.
  assert.equal(configFromMm1(mm1({ 'enable.idempotence': 'false' })).flows.length, 1)
})

test(
  "mm2.properties: MirrorMaker 2's <target>.exactly.once.source.support=enabled turns it on; preparing and disabled leave it off; the top-level key is not applied",
  () => {
    const file = (extra: Record<string, string>): string =>
      writeProperties(
        { clusters: 'A, B', 'A.bootstrap.servers': '127.0.0.1:1', 'B.bootstrap.servers': '127.0.0.1:2', 'A->B.enabled': 'true', ...extra },
        'mm2.properties'
      )
    const settings = sidecarSettingsFromFlags({}, new ProblemList())
    const on = configFromMm2(file({ 'B.exactly.once.source.support': 'enabled' }), { settings })
    assert.equal(on.flows[0]?.exactlyOnce?.key, 'B.exactly.once.source.support')
    assert.equal(on.flows[0]?.exactlyOnce?.positionsTopic, 'mirror-positions.A.internal')
    assert.deepEqual(on.ignoredKeys, [], 'the key is read, not reported as ignored')
    assert.equal(configFromMm2(file({ 'B.exactly.once.source.support': 'preparing' }), { settings }).flows[0]?.exactlyOnce, undefined)
    const topLevel = configFromMm2(file({ 'exactly.once.source.support': 'enabled' }), { settings })
    assert.equal(topLevel.flows[0]?.exactlyOnce, undefined)
    assert.deepEqual(topLevel.ignoredKeys, ['exactly.once.source.support'], 'listed as having no effect, as in MirrorMaker 2')
    assert.equal(
      configFromMm2(file({ 'B.exactly.once.source.support': 'enabled', 'A->B.exactly.once.commit.interval.ms': '500' }), { settings }).flows[0]?.exactlyOnce
        ?.commitIntervalMs,
      500
    )
    assert.throws(
      () => configFromMm2(file({ 'B.exactly.once.source.support': 'on' }), { settings }),
      /B\.exactly\.once\.source\.support "on": expected one of enabled, preparing, disabled/
    )
    assert.throws(
      () => configFromMm2(file({ 'B.exactly.once.source.support': 'enabled', 'B.producer.enable.idempotence': 'false' }), { settings }),
      /B\.producer\.enable\.idempotence "false": contradicts B\.exactly\.once\.source\.support/
    )
  }
)
