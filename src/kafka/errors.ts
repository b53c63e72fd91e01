import type { ClusterConnection } from '../config/cluster-connection.js'
import { ErrorCodes, MirrorError, rootCause, type ErrorCode } from '../shared/errors.js'
import { REQUEST_TIMEOUT_ERROR } from './wire/broker-connection.js'

interface KafkaJsErrorShape {
  name?: string
  message?: string
  type?: string
  retriable?: boolean
  cause?: unknown
  originalError?: unknown
}

/** A `MirrorError` that kafkajs wrapped (thrown by a callback it called, such as the OAuth token provider). */
function ownError (error: unknown): MirrorError | undefined {
  let current = error
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof MirrorError) return current
    const wrapper = current as { cause?: unknown, originalError?: unknown }
    current = wrapper.cause ?? wrapper.originalError
  }
  return undefined
}

/** The error that started it, through kafkajs' wrappers (retries exceeded, nested causes). */
function kafkaRootCause (error: unknown): KafkaJsErrorShape {
  return (rootCause(error) ?? {}) as KafkaJsErrorShape
}

const AUTH_TYPES = new Set([
  'SASL_AUTHENTICATION_FAILED',
  'ILLEGAL_SASL_STATE',
  'UNSUPPORTED_SASL_MECHANISM',
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
])

/** Node's codes for a TLS peer certificate that does not verify (untrusted, expired, wrong host). */
const TLS_CERT_CODES = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE', 'ERR_TLS_CERT_ALTNAME_INVALID'])

/**
 * TLS alerts a broker sends when it refuses the client's certificate, or its absence, on a listener
 * with `ssl.client.auth=required` (Java sends bad_certificate for none, certificate_unknown for an
 * untrusted one; other servers use the rest). Node names them `ERR_SSL_<reason>`.
 */
const CLIENT_CERT_ALERT =
  /(?:sslv3|tlsv1|tlsv13|ssl\/tls) alert (bad certificate|certificate unknown|unknown ca|certificate required|certificate expired|certificate revoked|unsupported certificate|access denied)/i

/** The alert name when the broker refused the client certificate, e.g. `bad certificate`. */
function clientCertificateAlert (errors: readonly KafkaJsErrorShape[]): string | undefined {
  for (const error of errors) {
    const code = (error as { code?: unknown }).code
    const text = `${typeof code === 'string' ? code.replace(/^ERR_SSL_/, '').replace(/_/g, ' ') : ''} ${error.message ?? ''}`
    const match = CLIENT_CERT_ALERT.exec(text)
    if (match !== null) return (match[1] as string).toLowerCase()
  }
  return undefined
}

/** What to do when the broker refused the client certificate; `hasCertificate` undefined when the connection is not known. */
function clientCertificateHint (hasCertificate: boolean | undefined): string {
  if (hasCertificate === false) {
    return 'the listener requires a TLS client certificate (ssl.client.auth=required) and none is configured; set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain) to a client certificate signed by a CA the broker trusts'
  }
  if (hasCertificate === true) {
    return "the broker did not accept the client certificate of ssl.keystore.location (or ssl.keystore.key); it must be signed by a CA in the broker's ssl.truststore and be valid now"
  }
  return 'the listener requires a TLS client certificate it trusts; set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain) to one signed by a CA in the broker\'s ssl.truststore'
}

/** True when `connection` presents a client certificate (PEM key or PKCS12 store). */
function presentsCertificate (connection: Pick<ClusterConnection, 'tls'>): boolean {
  return connection.tls?.key !== undefined || connection.tls?.pfx !== undefined
}

/** What to do about an authentication or TLS failure, added to its message. */
function securityHint (kafkaCode: string | undefined, name: string, tlsCode: string | undefined, reason: string, mechanism?: string): string | undefined {
  const oauth = mechanism === 'oauthbearer'
  if (tlsCode === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return "the broker's TLS certificate does not name this host; connect by a name in the certificate, or set ssl.endpoint.identification.algorithm= (empty) to skip the host name check"
  }
  if (tlsCode !== undefined && TLS_CERT_CODES.has(tlsCode)) {
    return "the broker's TLS certificate is not trusted; set ssl.truststore.location (or ssl.truststore.certificates) to the CA that signed it"
  }
  if (kafkaCode === 'UNSUPPORTED_SASL_MECHANISM' || /does not support the requested SASL mechanism/i.test(reason)) {
    return "wrong SASL mechanism: set sasl.mechanism to one the broker's listener enables (sasl.enabled.mechanisms)"
  }
  if ((name === 'KafkaJSSASLAuthenticationError' || kafkaCode === 'SASL_AUTHENTICATION_FAILED') && oauth) {
    return "the broker refused the OAuth token: the broker's sasl.oauthbearer.expected.audience / expected.issuer and JWKS must match the tokens of sasl.oauthbearer.token.endpoint.url; check scope and audience with the identity provider"
  }
  if ((name === 'KafkaJSSASLAuthenticationError' || kafkaCode === 'SASL_AUTHENTICATION_FAILED') && mechanism === 'aws_msk_iam') {
    return "the broker refused the AWS_MSK_IAM signature: the identity (see awsDebugCreds) needs kafka-cluster:Connect on the cluster in its IAM policy, and this host's clock must be right"
  }
  if ((name === 'KafkaJSSASLAuthenticationError' || kafkaCode === 'SASL_AUTHENTICATION_FAILED') && mechanism === 'gssapi') {
    return "the broker refused the Kerberos authentication: its listener's principal and keytab must match the service principal sasl.kerberos.service.name/<broker host> the client asked the KDC for"
  }
  if (name === 'KafkaJSSASLAuthenticationError' || kafkaCode === 'SASL_AUTHENTICATION_FAILED') return 'check the username and password in sasl.jaas.config'
  return undefined
}

/**
 * Converts an error thrown by the Kafka client into a `MirrorError`. `retriable` follows the
 * original cause: a request that ran out of client retries on a connection error is still worth
 * retrying later (the broker may come back), a `MESSAGE_TOO_LARGE` never is. `cluster`, the
 * connection that failed, lets a refused client certificate be told from a missing one.
 */
export function toMirrorError (
  error: unknown,
  context: string,
  code: ErrorCode = ErrorCodes.KAFKA,
  cluster?: Pick<ClusterConnection, 'tls' | 'sasl'>
): MirrorError {
  if (error instanceof MirrorError) return error
  // Our own error thrown inside the client (the OAuth token source): kept as it is, with where it happened.
  const own = ownError(error)
  if (own !== undefined) return new MirrorError(own.code, `${context}: ${own.message}`, { retriable: own.retriable, cause: error })
  const root = kafkaRootCause(error)
  const top = (error ?? {}) as KafkaJsErrorShape
  const alert = clientCertificateAlert([root, top])
  if (alert !== undefined) {
    // Not retriable: the broker refuses the same certificate on every attempt.
    return new MirrorError(
      ErrorCodes.AUTHENTICATION,
      `${context}: the broker refused the TLS handshake (alert "${alert}"): ${clientCertificateHint(cluster === undefined ? undefined : presentsCertificate(cluster))}`,
      { cause: error }
    )
  }
  const kafkaCode = root.type ?? top.type
  const name = root.name ?? top.name ?? 'Error'
  const tlsCode = [(root as { code?: unknown }).code, (top as { code?: unknown }).code].find(c => typeof c === 'string' && TLS_CERT_CODES.has(c)) as
    string | undefined
  const authentication = (kafkaCode !== undefined && AUTH_TYPES.has(kafkaCode)) || name === 'KafkaJSSASLAuthenticationError' || tlsCode !== undefined
  const connection =
    name === 'KafkaJSConnectionError' ||
    name === 'KafkaJSRequestTimeoutError' ||
    name === 'KafkaJSConnectionClosedError' ||
    name === 'KafkaJSBrokerNotFound' ||
    name === 'KafkaJSMetadataNotLoaded' ||
    name === 'KafkaJSLockTimeout' ||
    name === 'KafkaJSStaleTopicMetadataAssignment' ||
    // No broker answered FindCoordinator: the cluster is unreachable, not a coordinator that is gone for good.
    name === 'KafkaJSGroupCoordinatorNotFound'
  const retriable = !authentication && (connection || root.retriable === true || top.retriable === true)
  const reason = root.message ?? top.message ?? String(error)
  const hint = securityHint(kafkaCode, name, tlsCode, reason, cluster?.sasl?.mechanism)
  return new MirrorError(
    authentication ? ErrorCodes.AUTHENTICATION : connection ? ErrorCodes.CONNECTION : code,
    `${context}: ${reason}${hint === undefined ? '' : ` (${hint})`}`,
    {
      retriable,
      cause: error,
      ...(kafkaCode === undefined ? {} : { kafkaCode }),
    }
  )
}

/**
 * `toMirrorError` phrased for a command-line check, where the question is "which cluster, and what
 * do I fix": the message names the cluster and its bootstrap servers, and an unreachable cluster
 * or refused credentials say what to check.
 */
export function toClusterError (error: unknown, connection: ClusterConnection): MirrorError {
  if (error instanceof MirrorError) return error
  const where = `the ${connection.alias} cluster (${connection.brokers.join(',')})`
  // Refused certificates and credentials read as what to fix, not as an unreachable cluster.
  const converted = toMirrorError(error, where, ErrorCodes.KAFKA, connection)
  if (converted.code === ErrorCodes.AUTHENTICATION || ownError(error) !== undefined) return converted
  const root = kafkaRootCause(error)
  const name = String(root.name ?? '')
  const message = String(root.message ?? root)
  if (/Connection|BrokerNotFound|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|timed? ?out/i.test(name + ' ' + message)) {
    return new MirrorError(ErrorCodes.CONNECTION, `cannot reach ${where}: ${message}; check the bootstrap servers and that the brokers are up`, {
      cause: error,
      retriable: true,
    })
  }
  if (/SASL|Authentication/i.test(name + ' ' + message)) {
    return new MirrorError(ErrorCodes.AUTHENTICATION, `authentication with ${where} failed: ${message}; check the credentials in the command config`, {
      cause: error,
    })
  }
  // Retriable as the broker says (NOT_LEADER_OR_FOLLOWER while leadership moves, say): a caller that retries goes on.
  return new MirrorError(ErrorCodes.KAFKA, `${where}: ${message}`, {
    cause: error,
    retriable: converted.retriable,
    ...(root.type === undefined ? {} : { kafkaCode: root.type }),
  })
}

/**
 * A retriable fault of a cluster that answers, at least in part: a protocol error (a coordinator
 * loading or moving, a partition without a leader yet) or a broker that took the connection but
 * left it or the request unanswered (a hung broker). A cluster none of whose brokers takes a
 * connection (refused, unknown host) is not one: at start that is more likely a wrong address.
 */
export function isPassingClusterFault (error: unknown): boolean {
  if (!(error instanceof MirrorError) || !error.retriable) return false
  const root = kafkaRootCause(error.cause)
  if (error.kafkaCode !== undefined || root.type !== undefined || root.name === 'KafkaJSRequestTimeoutError' || root.name === REQUEST_TIMEOUT_ERROR) return true
  return root.name === 'KafkaJSConnectionError' && /timeout/i.test(root.message ?? '')
}
