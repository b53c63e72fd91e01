import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { logLevel } from '@kafka-mirror-sidecar/kafkajs'
import { logCreatorFor, RETRIABLE_PROTOCOL_ERRORS } from '../../../src/kafka/client.js'
import { createLogger } from '../../../src/shared/logger.js'

function levels (entries: Array<Record<string, unknown>>): Array<[unknown, unknown]> {
  const lines: Array<Record<string, unknown>> = []
  const logger = createLogger({ level: 'debug', write: line => lines.push(JSON.parse(line) as Record<string, unknown>) })
  const log = logCreatorFor(logger)(logLevel.DEBUG)
  for (const entry of entries) {
    log({
      namespace: String(entry.namespace ?? 'Connection'),
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp: 'now', logger: '@kafka-mirror-sidecar/kafkajs', ...entry } as never,
    })
  }
  return lines.map(line => [line.level, line.error ?? line.msg])
}

/** What kafkajs' Connection logs for an error answer before its retrier tries again. */
const response = (api: string, error: string): Record<string, unknown> =>
  ({ message: `Response ${api}(key: 10, version: 2)`, broker: '127.0.0.1:19092', clientId: 'mirror-sidecar', error, correlationId: 3, size: 42 })

test('kafkajs error lines for retried answers are debug at start-up, warn otherwise; what gives up stays error', () => {
  assert.deepEqual(
    levels([
      response('FindCoordinator', "The coordinator is loading and hence can't process requests for this group"),
      response('FindCoordinator', 'The group coordinator is not available'),
      response('JoinGroup', 'This is not the correct coordinator for this group'),
      response('Metadata', 'There is no leader for this topic-partition as we are in the middle of a leadership election'),
      response('Produce', 'Messages are rejected since there are fewer in-sync replicas than required'),
      response('Fetch', 'The fetch session ID was not found'),
      {
        namespace: 'Runner',
        message: 'The coordinator is not aware of this member, re-joining the group',
        groupId: 'g',
        error: 'The coordinator is not aware of this member',
      },
      { namespace: 'Consumer', message: 'Restarting the consumer in 300ms', retryCount: 5, retryTime: 300, groupId: 'g' },
      response('Produce', 'Not authorized to access topics: [Topic authorization failed]'),
      { namespace: 'Consumer', message: 'Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available', retryCount: 5, groupId: 'g' },
    ]),
    [
      ['debug', "The coordinator is loading and hence can't process requests for this group"],
      ['debug', 'The group coordinator is not available'],
      ['debug', 'This is not the correct coordinator for this group'],
      ['debug', 'There is no leader for this topic-partition as we are in the middle of a leadership election'],
      ['warn', 'Messages are rejected since there are fewer in-sync replicas than required'],
      ['warn', 'The fetch session ID was not found'],
      ['warn', 'The coordinator is not aware of this member'],
      ['warn', 'Restarting the consumer in 300ms'],
      ['error', 'Not authorized to access topics: [Topic authorization failed]'],
      ['error', 'Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available'],
    ]
  )
})

test('at info level the retried answers of a cluster starting up print nothing', () => {
  const lines: string[] = []
  const log = logCreatorFor(createLogger({ level: 'info', write: line => lines.push(line) }))(logLevel.INFO)
  log({
    namespace: 'Connection',
    level: logLevel.ERROR,
    label: 'ERROR',
    log: { timestamp: 'now', logger: '@kafka-mirror-sidecar/kafkajs', ...response('FindCoordinator', 'The group coordinator is not available') } as never,
  })
  assert.deepEqual(lines, [])
})

test('the retriable answers are exactly those kafkajs marks retriable', () => {
  // A test may look inside kafkajs: this fails when an upgrade changes the list.
  const { errorCodes } = createRequire(import.meta.url)('@kafka-mirror-sidecar/kafkajs/src/protocol/error.js') as {
    errorCodes: Array<{ message: string, retriable: boolean }>
  }
  assert.deepEqual([...RETRIABLE_PROTOCOL_ERRORS].sort(), errorCodes.filter(e => e.retriable).map(e => e.message).sort())
})
