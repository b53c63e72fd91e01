import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tlsOptions } from '../../../src/config/cluster-connection.js'
import { isPassingClusterFault, toClusterError, toMirrorError } from '../../../src/kafka/errors.js'
import { errorLabel, ErrorCodes, MirrorError } from '../../../src/shared/errors.js'

/** An error shaped as kafkajs' (only src/kafka imports it): `name`, `code`, `retriable`, wrapped by the retrier in `originalError`. */
function kafkaJsError (name: string, message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name, retriable: true, ...fields })
}

/** What kafkajs throws when the broker sends a TLS alert during the handshake (code and text as Node gives them). */
function alertError (code: string, reason: string): Error {
  const connection = kafkaJsError(
    'KafkaJSConnectionError',
    `Connection error: 80AC3FF5F87F0000:error:0A000412:SSL routines:ssl3_read_bytes:${reason}:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 42`,
    { broker: '127.0.0.1:9093', code }
  )
  return kafkaJsError('KafkaJSNumberOfRetriesExceeded', connection.message, { originalError: connection, retriable: false })
}

test('a refused client certificate is an authentication error, not retriable, saying whether a certificate was configured and which key to set', () => {
  const context = 'cannot connect to the target cluster (127.0.0.1:9093)'
  const withCertificate = tlsOptions({ key: 'k', cert: 'c' })
  const cases: Array<[Error, Parameters<typeof toMirrorError>[3], RegExp]> = [
    [
      alertError('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', 'sslv3 alert bad certificate'),
      { tls: tlsOptions({ ca: 'x' }) },
      /alert "bad certificate"\): the listener requires a TLS client certificate \(ssl\.client\.auth=required\) and none is configured; set ssl\.keystore\.location/,
    ],
    [
      alertError('ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN', 'sslv3 alert certificate unknown'),
      { tls: withCertificate },
      /alert "certificate unknown"\): the broker did not accept the client certificate of ssl\.keystore\.location/,
    ],
    // Node 24's OpenSSL names the alert "ssl/tls alert ...".
    [
      alertError('ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE', 'error:0A000412:SSL routines:ssl3_read_bytes:ssl/tls alert bad certificate'),
      { tls: tlsOptions({ ca: 'x' }) },
      /alert "bad certificate"\): the listener requires a TLS client certificate \(ssl\.client\.auth=required\) and none is configured; set ssl\.keystore\.location/,
    ],
    [
      alertError('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'tlsv13 alert certificate required'),
      { tls: tlsOptions({ pfx: Buffer.from('p'), passphrase: 'x' }) },
      /alert "certificate required"\): the broker did not accept/,
    ],
    [
      alertError('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'tlsv1 alert unknown ca'),
      undefined,
      /alert "unknown ca"\): the listener requires a TLS client certificate it trusts/,
    ],
  ]
  for (const [error, cluster, expected] of cases) {
    const converted = toMirrorError(error, context, ErrorCodes.CONNECTION, cluster)
    assert.equal(converted.code, ErrorCodes.AUTHENTICATION)
    assert.equal(converted.retriable, false)
    assert.ok(converted.message.startsWith(`${context}: the broker refused the TLS handshake (`), converted.message)
    assert.match(converted.message, expected)
    assert.doesNotMatch(converted.message, /SSL routines|rec_layer/)
  }
})

test('a plain connection error stays a retriable connection error', () => {
  const refused = kafkaJsError('KafkaJSConnectionError', 'Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', code: 'ECONNREFUSED' })
  const converted = toMirrorError(refused, 'cannot connect to the target cluster (127.0.0.1:1)', ErrorCodes.CONNECTION, { tls: tlsOptions({}) })
  assert.equal(converted.code, ErrorCodes.CONNECTION)
  assert.equal(converted.retriable, true)
})

test('a passing fault of a cluster that answers is retried at start; a cluster that takes no connection, or a refusal, is not', () => {
  const converted = (error: Error): MirrorError => toMirrorError(error, 'cannot connect to the target cluster (127.0.0.1:1)', ErrorCodes.CONNECTION)
  const retriesExceeded = (cause: Error): Error => kafkaJsError('KafkaJSNumberOfRetriesExceeded', cause.message, { cause, retriable: false })
  const loading = kafkaJsError('KafkaJSProtocolError', "The coordinator is loading and hence can't process requests for this group", {
    type: 'COORDINATOR_LOAD_IN_PROGRESS',
    code: 14,
  })
  const timedOut = kafkaJsError('KafkaJSRequestTimeoutError', 'Request InitProducerId(key: 22, version: 1) timed out', { broker: '127.0.0.1:2' })
  const hungConnect = kafkaJsError('KafkaJSConnectionError', 'Connection timeout', { broker: '127.0.0.1:2' })
  const refused = kafkaJsError('KafkaJSConnectionError', 'Connection error: connect ECONNREFUSED 127.0.0.1:1', { code: 'ECONNREFUSED' })
  const denied = kafkaJsError('KafkaJSProtocolError', 'Not authorized to access topics', { type: 'TOPIC_AUTHORIZATION_FAILED', retriable: false })
  const errors = [loading, retriesExceeded(loading), timedOut, retriesExceeded(hungConnect), refused, retriesExceeded(refused), denied]
  assert.deepEqual(errors.map(e => isPassingClusterFault(converted(e))), [true, true, true, true, false, false, false])
  assert.equal(isPassingClusterFault(loading), false, 'only a converted error')
})

test('for mirror-check, an unreachable cluster is named with its bootstrap servers and what to check', () => {
  const source = { alias: 'source', brokers: ['127.0.0.1:1'], clientId: 'mirror-check' }
  const refused = kafkaJsError('KafkaJSConnectionError', 'Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', code: 'ECONNREFUSED' })
  const retried = kafkaJsError('KafkaJSNumberOfRetriesExceeded', refused.message, { originalError: refused, retriable: false })
  const converted = toClusterError(retried, source)
  assert.equal(converted.code, ErrorCodes.CONNECTION)
  assert.equal(
    converted.message,
    'cannot reach the source cluster (127.0.0.1:1): Connection error: connect ECONNREFUSED 127.0.0.1:1; check the bootstrap servers and that the brokers are up'
  )
  const unknownTopic = toClusterError(
    kafkaJsError('KafkaJSProtocolError', 'This server does not host this topic-partition', { type: 'UNKNOWN_TOPIC_OR_PARTITION' }),
    source
  )
  assert.equal(unknownTopic.code, ErrorCodes.KAFKA)
  assert.equal(unknownTopic.kafkaCode, 'UNKNOWN_TOPIC_OR_PARTITION')
  assert.equal(unknownTopic.message, 'the source cluster (127.0.0.1:1): This server does not host this topic-partition')
  // Retriable as kafkajs says: the exactly-once position read retried NOT_LEADER while a target broker was paused, instead of stopping the process.
  const notLeader = toClusterError(
    kafkaJsError('KafkaJSProtocolError', 'This server is not the leader for that topic-partition', { type: 'NOT_LEADER_OR_FOLLOWER', retriable: true }),
    source
  )
  assert.equal(notLeader.retriable, true)
  assert.equal(
    toClusterError(kafkaJsError('KafkaJSProtocolError', 'Topic authorization failed', { type: 'TOPIC_AUTHORIZATION_FAILED', retriable: false }), source)
      .retriable,
    false
  )
})

test('errorLabel names a MirrorError by its Kafka error or code, any other error by the type or class of its root cause', () => {
  assert.equal(errorLabel(new MirrorError(ErrorCodes.SEND_FAILED, 'x', { kafkaCode: 'MESSAGE_TOO_LARGE' })), 'MESSAGE_TOO_LARGE')
  assert.equal(errorLabel(new MirrorError(ErrorCodes.SEND_FAILED, 'x')), ErrorCodes.SEND_FAILED)
  const root = kafkaJsError('KafkaJSProtocolError', 'not leader', { type: 'NOT_LEADER_OR_FOLLOWER' })
  assert.equal(errorLabel(kafkaJsError('KafkaJSNumberOfRetriesExceeded', 'gave up', { originalError: root })), 'NOT_LEADER_OR_FOLLOWER')
  assert.equal(errorLabel(kafkaJsError('KafkaJSConnectionError', 'refused')), 'KafkaJSConnectionError')
  assert.equal(errorLabel('a string'), 'unknown')
})

test('an aggregate of broker errors (createTopics) is converted from its first error: Kafka code and reason', () => {
  const broker = kafkaJsError('KafkaJSProtocolError', 'Replication factor: 3 larger than available brokers: 1.', {
    type: 'INVALID_REPLICATION_FACTOR',
    retriable: false,
  })
  const aggregate = Object.assign(kafkaJsError('KafkaJSAggregateError', 'Topic creation errors', { retriable: false }), { errors: [broker] })
  const converted = toMirrorError(aggregate, 'creating the internal topic t on the B cluster failed')
  assert.equal(converted.kafkaCode, 'INVALID_REPLICATION_FACTOR')
  assert.equal(converted.retriable, false)
  assert.equal(converted.message, 'creating the internal topic t on the B cluster failed: Replication factor: 3 larger than available brokers: 1.')
})

test('no broker answering FindCoordinator (the cluster unreachable) is a retriable connection error, not a lost transaction', () => {
  const notFound = kafkaJsError('KafkaJSGroupCoordinatorNotFound', 'Failed to find group coordinator', { retriable: false })
  const converted = toMirrorError(notFound, 'writing to the target cluster failed', ErrorCodes.SEND_FAILED)
  assert.equal(converted.retriable, true)
  assert.equal(converted.code, ErrorCodes.CONNECTION)
})
