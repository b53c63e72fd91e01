import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FlowConfig } from '../../../src/config/mirror-config.js'
import { SOURCE_CONSUMER_ENV, sourceConsumerOf, sourceConsumerProblems, sourceConsumerSetting } from '../../../src/kafka/source-consumer.js'
import { ConfigError } from '../../../src/shared/errors.js'
import { fakeFlowConfig } from '../../helpers/fake-ports.js'

const wire = { [SOURCE_CONSUMER_ENV]: 'wire' }
const exactlyOnce: FlowConfig['exactlyOnce'] = {
  key: '--exactly.once',
  commitIntervalMs: 100,
  transactionTimeoutMs: 60_000,
  positionsTopic: 'positions',
  positionsReplicationFactor: 1,
}

test('MIRROR_SOURCE_CONSUMER picks the source consumer: wire only when asked and the flow is at-least-once; another value is a config error', () => {
  assert.equal(sourceConsumerSetting({}), undefined)
  assert.equal(sourceConsumerSetting({ [SOURCE_CONSUMER_ENV]: '' }), undefined)
  assert.equal(sourceConsumerSetting({ [SOURCE_CONSUMER_ENV]: 'kafkajs' }), 'kafkajs')
  assert.throws(() => sourceConsumerSetting({ [SOURCE_CONSUMER_ENV]: 'java' }), (error: ConfigError) => {
    assert.ok(error instanceof ConfigError)
    assert.equal(error.message, 'MIRROR_SOURCE_CONSUMER "java": must be wire or kafkajs; unset it for the default (kafkajs)')
    return true
  })
  assert.equal(sourceConsumerOf(fakeFlowConfig(), {}), 'kafkajs')
  assert.equal(sourceConsumerOf(fakeFlowConfig(), wire), 'wire')
  assert.equal(sourceConsumerOf(fakeFlowConfig({ exactlyOnce }), wire), 'kafkajs')
})

test('group.protocol=consumer and group.instance.id are refused, naming the key, the value and what to do, where the flow reads through kafkajs', () => {
  const flow = fakeFlowConfig()
  const asking = fakeFlowConfig({ consumer: { ...flow.consumer, groupProtocol: 'consumer', groupInstanceId: 'pod-0' } })
  assert.deepEqual(sourceConsumerProblems([flow], {}), [])
  assert.deepEqual(sourceConsumerProblems([asking], wire), [])
  assert.deepEqual(sourceConsumerProblems([asking], {}).map(p => [p.key, p.value, p.message]), [
    ['group.protocol', 'consumer', "flow source->target: KIP-848's consumer protocol; set MIRROR_SOURCE_CONSUMER=wire, the source consumer that speaks it"],
    ['group.instance.id', 'pod-0', 'flow source->target: static membership (KIP-345); set MIRROR_SOURCE_CONSUMER=wire, the source consumer that speaks it'],
  ])
  const exact = fakeFlowConfig({ exactlyOnce, consumer: { ...flow.consumer, groupProtocol: 'consumer' } })
  assert.match(sourceConsumerProblems([exact], wire)[0]?.message ?? '', /exactly-once flows read through kafkajs, which does not speak it: remove the key/)
})
