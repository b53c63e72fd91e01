import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClusterConnection } from '../../../src/config/cluster-connection.js'
import { TARGET_PRODUCER_ENV, targetProducerOf, targetProducerSetting } from '../../../src/kafka/target-producer.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { fakeFlowConfig } from '../../helpers/fake-ports.js'

test('the wire sink writes every idempotent at-least-once flow, any security; MIRROR_TARGET_PRODUCER=kafkajs or no idempotence keeps kafkajs\'', () => {
  const wire = { [TARGET_PRODUCER_ENV]: 'wire' }
  assert.equal(targetProducerSetting({}), undefined)
  assert.equal(targetProducerSetting({ [TARGET_PRODUCER_ENV]: '' }), undefined)
  assert.equal(targetProducerSetting({ [TARGET_PRODUCER_ENV]: 'kafkajs' }), 'kafkajs')
  assert.throws(() => targetProducerSetting({ [TARGET_PRODUCER_ENV]: 'Wire' }), (error: ConfigError) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, 'MIRROR_TARGET_PRODUCER "Wire": must be wire or kafkajs; unset it for the default (wire)')
    return true
  })
  const flow = fakeFlowConfig()
  const kafkajs = { [TARGET_PRODUCER_ENV]: 'kafkajs' }
  assert.equal(targetProducerOf(flow, {}), 'wire')
  assert.equal(targetProducerOf(flow, { [TARGET_PRODUCER_ENV]: '' }), 'wire')
  assert.equal(targetProducerOf(flow, wire), 'wire')
  assert.equal(targetProducerOf(flow, kafkajs), 'kafkajs')
  const notIdempotent = fakeFlowConfig({ producer: { ...flow.producer, idempotent: false } })
  assert.equal(targetProducerOf(notIdempotent, {}), 'kafkajs')
  assert.equal(targetProducerOf(notIdempotent, wire), 'kafkajs')
  const gssapi = { ...flow.target, sasl: { mechanism: 'gssapi', serviceName: 'kafka', credentials: 'ticket-cache', jaasKey: 'x' } } as ClusterConnection
  assert.equal(targetProducerOf(fakeFlowConfig({ target: gssapi }), {}), 'wire')
})
