import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClusterConnection } from '../../../src/config/cluster-connection.js'
import { TARGET_PRODUCER_ENV, targetProducerOf, targetProducerSetting } from '../../../src/kafka/target-producer.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { fakeFlowConfig } from '../../helpers/fake-ports.js'

test('MIRROR_TARGET_PRODUCER picks the producer: wire only when asked and the producer is idempotent, whatever the target\'s security', () => {
  const wire = { [TARGET_PRODUCER_ENV]: 'wire' }
  assert.equal(targetProducerSetting({}), undefined)
  assert.equal(targetProducerSetting({ [TARGET_PRODUCER_ENV]: '' }), undefined)
  assert.equal(targetProducerSetting({ [TARGET_PRODUCER_ENV]: 'kafkajs' }), 'kafkajs')
  assert.throws(() => targetProducerSetting({ [TARGET_PRODUCER_ENV]: 'Wire' }), (error: ConfigError) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, 'MIRROR_TARGET_PRODUCER "Wire": must be wire or kafkajs; unset it for the default (kafkajs)')
    return true
  })
  const flow = fakeFlowConfig()
  assert.equal(targetProducerOf(flow, {}), 'kafkajs')
  assert.equal(targetProducerOf(flow, wire), 'wire')
  assert.equal(targetProducerOf(fakeFlowConfig({ producer: { ...flow.producer, idempotent: false } }), wire), 'kafkajs')
  const gssapi = { ...flow.target, sasl: { mechanism: 'gssapi', serviceName: 'kafka', credentials: 'ticket-cache', jaasKey: 'x' } } as ClusterConnection
  assert.equal(targetProducerOf(fakeFlowConfig({ target: gssapi }), wire), 'wire')
})
