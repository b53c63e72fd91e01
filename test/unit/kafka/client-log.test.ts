import assert from 'node:assert/strict'
import { test } from 'node:test'
import { logLevel } from '@kafka-mirror-sidecar/kafkajs'
import { logCreatorFor } from '../../../src/kafka/client.js'
import { createLogger, type LogLevel } from '../../../src/shared/logger.js'

function capture (level: LogLevel): { lines: Array<Record<string, unknown>>, log: (kafkajsLevel: number, entry: Record<string, unknown>) => void } {
  const lines: Array<Record<string, unknown>> = []
  const logger = createLogger({ level, write: line => lines.push(JSON.parse(line) as Record<string, unknown>) })
  const log = logCreatorFor(logger)(logLevel.INFO)
  return {
    lines,
    log: (kafkajsLevel, entry) =>
      log({
        namespace: 'Connection',
        level: kafkajsLevel,
        label: 'ERROR',
        log: { timestamp: 'now', logger: '@kafka-mirror-sidecar/kafkajs', message: 'x', ...entry } as never,
      }),
  }
}

test('kafkajs log lines: retried connection failures are warnings, stacks only at debug, other errors stay errors', () => {
  const info = capture('info')
  info.log(logLevel.ERROR, {
    message: 'Connection error: connect ECONNREFUSED 127.0.0.1:39000',
    broker: '127.0.0.1:39000',
    stack: 'Error: connect ECONNREFUSED\n    at TCPConnectWrap',
  })
  info.log(logLevel.ERROR, {
    message: 'Failed to connect to seed broker, trying another broker from the list: Connection error',
    retryCount: 2,
    retryTime: 1032,
  })
  info.log(logLevel.ERROR, { message: 'Crash: KafkaJSNonRetriableError: Topic authorization failed', stack: 'KafkaJSNonRetriableError\n    at x' })
  info.log(logLevel.INFO, { message: 'Starting' })
  assert.deepEqual(info.lines.map(line => [line.level, line.msg, 'stack' in line]), [
    ['warn', 'Connection error: connect ECONNREFUSED 127.0.0.1:39000', false],
    ['warn', 'Failed to connect to seed broker, trying another broker from the list: Connection error', false],
    ['error', 'Crash: KafkaJSNonRetriableError: Topic authorization failed', false],
  ])
  assert.equal(info.lines[0]?.broker, '127.0.0.1:39000', 'fields other than the stack are kept')

  const debug = capture('debug')
  debug.log(logLevel.ERROR, { message: 'Connection error: connect ECONNREFUSED 127.0.0.1:39000', stack: 'Error: connect ECONNREFUSED' })
  debug.log(logLevel.INFO, { message: 'Starting' })
  assert.deepEqual(debug.lines.map(line => [line.level, line.msg, line.stack]), [
    ['warn', 'Connection error: connect ECONNREFUSED 127.0.0.1:39000', 'Error: connect ECONNREFUSED'],
    ['debug', 'Starting', undefined],
  ])
})

test('kafkajs log lines: a cluster without an authorizer answering the ACL sync is not an error (the mirror skips ACL sync there)', () => {
  const info = capture('info')
  info.log(logLevel.ERROR, { message: 'Response DescribeAcls(key: 29, version: 1)', error: 'Security features are disabled', broker: '127.0.0.1:19092' })
  info.log(logLevel.ERROR, { message: 'Response DescribeAcls(key: 29, version: 1)', error: 'Cluster authorization failed', broker: '127.0.0.1:19092' })
  assert.deepEqual(info.lines.map(line => [line.level, line.error]), [['error', 'Cluster authorization failed']])
})

test(
  'kafkajs log lines: "rebalancing" answers to JoinGroup, SyncGroup and Heartbeat are the group protocol at work (debug); elsewhere they stay errors',
  () => {
    const info = capture('info')
    info.log(logLevel.ERROR, {
      message: 'Response SyncGroup(key: 14, version: 3)',
      error: 'The group is rebalancing, so a rejoin is needed',
      broker: '127.0.0.1:19092',
    })
    info.log(logLevel.ERROR, {
      message: 'Response Heartbeat(key: 12, version: 3)',
      error: 'The group is rebalancing, so a rejoin is needed',
      broker: '127.0.0.1:19092',
    })
    info.log(logLevel.ERROR, {
      message: 'Response OffsetCommit(key: 8, version: 5)',
      error: 'The group is rebalancing, so a rejoin is needed',
      broker: '127.0.0.1:19092',
    })
    assert.deepEqual(info.lines.map(line => [line.level, line.msg]), [['error', 'Response OffsetCommit(key: 8, version: 5)']])
  }
)

test('kafkajs log lines: a Metadata answer naming a topic not hosted (created or deleted meanwhile) is debug; the same answer to a Produce is not', () => {
  const info = capture('info')
  info.log(logLevel.ERROR, {
    message: 'Response Metadata(key: 3, version: 6)',
    error: 'This server does not host this topic-partition',
    broker: '127.0.0.1:29092',
  })
  info.log(logLevel.ERROR, {
    message: 'Response Produce(key: 0, version: 7)',
    error: 'This server does not host this topic-partition',
    broker: '127.0.0.1:29092',
  })
  assert.deepEqual(info.lines.map(line => [line.level, line.msg]), [['warn', 'Response Produce(key: 0, version: 7)']])
})
