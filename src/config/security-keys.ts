import type { KeyRow } from './key-table.js'

/** When a security key is applied: always, with TLS, with SASL, with one SASL mechanism, or never (a refused Java class). */
export type SecurityUse = 'always' | 'tls' | 'sasl' | 'oauthbearer' | 'aws_msk_iam' | 'gssapi' | 'never'

/** A row of the security table: a key row with when it is applied and, for keys naming Java classes, the refusal. */
export interface SecurityKeyRow extends KeyRow {
  readonly use: SecurityUse
  /** The message when the key is set where it is not applied: Java classes cannot run here. */
  readonly refused?: string
}

const JAVA_CLASS =
  'Java classes cannot be loaded here; remove the key (supported: PLAIN, SCRAM, OAUTHBEARER, AWS_MSK_IAM and GSSAPI with sasl.jaas.config, JKS/PKCS12/PEM stores)'

/** The protocols `security.protocol` takes. */
export const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const

const oauth = (key: string, rest: Omit<SecurityKeyRow, 'key' | 'use'>): SecurityKeyRow => ({ key, use: 'oauthbearer', ...rest })
const OAUTH_PARSER = 'oauthBearerFromProperties'
const tls = (key: string, defaultText: string, doc: string): SecurityKeyRow =>
  ({ key, type: 'text', use: 'tls', readBy: 'key-stores', defaultText, doc })

/**
 * The security keys of a Java client configuration (`securityFromProperties`): which are applied
 * when, which are refused, their defaults. Other `ssl.*` and `sasl.*` keys are reported as ignored.
 * The refused Java class keys come first, in the order their problems are reported.
 */
export const SECURITY_TABLE: readonly SecurityKeyRow[] = [
  {
    key: 'sasl.client.callback.handler.class',
    type: 'text',
    use: 'aws_msk_iam',
    readBy: 'awsMskIamFromProperties',
    refused: JAVA_CLASS,
    doc: "with AWS_MSK_IAM only aws-msk-iam-auth's `IAMClientCallbackHandler`; refused otherwise",
  },
  oauth('sasl.login.callback.handler.class', {
    type: 'text',
    readBy: OAUTH_PARSER,
    refused: JAVA_CLASS,
    doc: "with OAUTHBEARER only Kafka's `OAuthBearerLoginCallbackHandler` (may be left out); refused otherwise",
  }),
  { key: 'sasl.login.class', type: 'text', use: 'never', refused: JAVA_CLASS, doc: 'refused: no Java code runs here' },
  { key: 'ssl.engine.factory.class', type: 'text', use: 'never', refused: JAVA_CLASS, doc: 'refused: no Java code runs here' },
  {
    key: 'security.protocol',
    type: 'choice',
    use: 'always',
    choices: PROTOCOLS,
    default: 'PLAINTEXT',
    readBy: 'securityFromProperties',
    doc: 'PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL',
  },
  {
    key: 'sasl.mechanism',
    type: 'text',
    use: 'sasl',
    default: 'GSSAPI',
    readBy: 'securityFromProperties',
    doc: "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI (Java's default)",
  },
  {
    key: 'sasl.jaas.config',
    type: 'text',
    use: 'sasl',
    readBy: 'securityFromProperties',
    defaultText: 'required with SASL',
    doc: 'the login module and its options',
  },
  {
    key: 'sasl.kerberos.service.name',
    type: 'text',
    use: 'gssapi',
    readBy: 'kerberosFromProperties',
    defaultText: 'required with GSSAPI',
    doc: "the brokers' Kerberos service",
  },
  oauth('sasl.oauthbearer.token.endpoint.url', {
    type: 'text',
    readBy: OAUTH_PARSER,
    defaultText: 'required with OAUTHBEARER',
    doc: 'the token endpoint (https, or a `file:` URL of a token)',
  }),
  oauth('sasl.oauthbearer.scope', { type: 'text', readBy: OAUTH_PARSER, defaultText: 'JAAS option `scope`', doc: 'the scope asked for' }),
  oauth('sasl.oauthbearer.client.credentials.client.id', { type: 'text', readBy: OAUTH_PARSER, defaultText: 'JAAS option `clientId`', doc: 'the client id' }),
  oauth('sasl.oauthbearer.client.credentials.client.secret', {
    type: 'text',
    readBy: OAUTH_PARSER,
    defaultText: 'JAAS option `clientSecret`',
    doc: 'the client secret',
  }),
  oauth('sasl.login.connect.timeout.ms', { type: 'integer', min: 1, default: 10_000, doc: 'with the read timeout: longest one token request' }),
  oauth('sasl.login.read.timeout.ms', { type: 'integer', min: 1, default: 10_000, doc: 'with the connect timeout: longest one token request' }),
  oauth('sasl.oauthbearer.header.urlencode', { type: 'boolean', default: false, doc: 'URL-encode the client id and secret before Basic authentication' }),
  oauth('sasl.oauthbearer.sub.claim.name', { type: 'text', default: 'sub', doc: 'the claim the token must hold' }),
  oauth('sasl.login.refresh.window.factor', { type: 'number', min: 0.5, max: 1, default: 0.8, doc: 'refresh after this part of the lifetime' }),
  oauth('sasl.login.refresh.window.jitter', { type: 'number', min: 0, max: 0.25, default: 0.05, doc: 'plus up to this part of the lifetime' }),
  oauth('sasl.login.refresh.min.period.seconds', { type: 'integer', min: 0, max: 900, default: 60, doc: 'no sooner than this after the last fetch' }),
  oauth('sasl.login.refresh.buffer.seconds', { type: 'integer', min: 0, max: 3600, default: 300, doc: 'at least this before expiry' }),
  oauth('sasl.login.retry.backoff.ms', { type: 'integer', min: 1, default: 100, doc: 'first wait before a token request is retried' }),
  oauth('sasl.login.retry.backoff.max.ms', { type: 'integer', min: 1, default: 10_000, doc: 'longest wait between retries' }),
  tls('ssl.truststore.location', 'none: the system CAs', 'the truststore file'),
  tls('ssl.truststore.type', 'JKS', '`JKS`, `PKCS12`, `PEM` (`JCEKS` is refused); the content decides when it disagrees'),
  tls('ssl.truststore.password', 'none', "checks the truststore's integrity; optional (Java reads trusted certificates without it too)"),
  tls('ssl.truststore.certificates', 'none', 'trusted certificates inline, PEM'),
  tls('ssl.keystore.location', 'none: no client certificate', 'the keystore file (mutual TLS)'),
  tls('ssl.keystore.type', 'JKS', '`JKS`, `PKCS12`, `PEM` (`JCEKS` is refused); the content decides when it disagrees'),
  tls('ssl.keystore.password', 'none', 'opens the keystore; required for JKS and PKCS12 keystores'),
  tls('ssl.keystore.key', 'none', 'the client key inline, PEM (with `ssl.keystore.certificate.chain`)'),
  tls('ssl.keystore.certificate.chain', 'none', 'the client certificate chain inline, PEM'),
  tls('ssl.key.password', '`ssl.keystore.password`', "the private key's own password in a JKS keystore"),
  { ...tls('ssl.endpoint.identification.algorithm', 'https', 'https checks the broker host name; empty does not'), readBy: 'securityFromProperties' },
  { ...tls('ssl.enabled.protocols', "Node's (TLSv1.2, TLSv1.3)", 'the TLS versions, from the lowest to the highest named'), readBy: 'securityFromProperties' },
  { ...tls('ssl.protocol', 'none (not read)', 'accepted; the versions come from `ssl.enabled.protocols`'), readBy: 'securityFromProperties' },
]

/** The row of a security key, or undefined for a key the table does not hold. */
export function securityRow (key: string): SecurityKeyRow | undefined {
  return SECURITY_TABLE.find(row => row.key === key)
}
