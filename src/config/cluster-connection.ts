import type { ConnectionOptions } from 'node:tls'
import { inspect } from 'node:util'
import { redactUrl } from '../shared/redact-url.js'

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512'

/**
 * SASL credentials. The password never leaves this object: it is not logged or printed. Build
 * them with `saslCredentials()`, which keeps the password in a non-enumerable property and
 * redacts it in `JSON.stringify` and `util.inspect`.
 */
export interface SaslCredentials {
  readonly mechanism: SaslMechanism
  readonly username: string
  readonly password: string
}

/**
 * SASL/OAUTHBEARER with the OAuth 2 client credentials grant (KIP-768): tokens are fetched from
 * `tokenEndpointUrl` with `clientId`/`clientSecret` and refreshed before they expire. The client
 * secret is non-enumerable and redacted in JSON and inspect; build with `oauthBearerCredentials()`.
 */
export interface OAuthBearerCredentials {
  readonly mechanism: 'oauthbearer'
  /** `sasl.oauthbearer.token.endpoint.url`: an http(s) token endpoint, or a `file:` URL of a file holding a token (read again at each refresh). */
  readonly tokenEndpointUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** `scope` sent with the grant; none when undefined. */
  readonly scope?: string
  /** SASL extensions (`extension_NAME` JAAS options), sent with every authentication. */
  readonly extensions: Readonly<Record<string, string>>
  /** `sasl.oauthbearer.header.urlencode`: URL-encode client id and secret in the Basic header; default false. */
  readonly headerUrlencode: boolean
  /** `sasl.oauthbearer.sub.claim.name`: the claim naming the principal, which a token must have; default `sub`. */
  readonly subClaimName: string
  /** `sasl.login.refresh.window.factor`: refresh once this fraction of the lifetime passed; 0.5-1.0, default 0.8. */
  readonly refreshWindowFactor: number
  /** `sasl.login.refresh.window.jitter`: random fraction of the lifetime added to that; 0-0.25, default 0.05. */
  readonly refreshWindowJitter: number
  /** `sasl.login.refresh.min.period.seconds`: no refresh sooner after the last; 0-900, default 60. */
  readonly refreshMinPeriodSeconds: number
  /** `sasl.login.refresh.buffer.seconds`: refresh at least this long before expiry; 0-3600, default 300. */
  readonly refreshBufferSeconds: number
  /** `sasl.login.connect.timeout.ms` / `sasl.login.read.timeout.ms` together: the whole token request; default 10000. */
  readonly requestTimeoutMs: number
  /** `sasl.login.retry.backoff.ms`: first wait before fetching again after a failure that may pass; default 100. */
  readonly retryBackoffMs: number
  /** `sasl.login.retry.backoff.max.ms`: longest wait, and the time a first fetch keeps trying; default 10000. */
  readonly retryBackoffMaxMs: number
  /** How to name the JAAS key in messages, e.g. `B.sasl.jaas.config`. */
  readonly jaasKey: string
}

/**
 * SASL/AWS_MSK_IAM (Amazon MSK with IAM access control): each authentication sends a SigV4
 * presigned `kafka-cluster:Connect` request as JSON, signed with credentials of the AWS SDK's
 * chain, of a profile or of an assumed role. No secret is held here: credentials are fetched
 * when a connection authenticates. Options are the JAAS options of aws-msk-iam-auth's `IAMLoginModule`.
 */
export interface AwsMskIamSettings {
  readonly mechanism: 'aws_msk_iam'
  /** `awsProfileName`: the profile of the shared config and credentials files; default: the SDK's default chain. */
  readonly profileName?: string
  /** `awsRoleArn`: a role assumed through STS with the credentials of the profile or the chain. */
  readonly roleArn?: string
  /** `awsRoleSessionName`: the session name of the assumed role; default `kafka-mirror-sidecar-<epoch ms>`. */
  readonly roleSessionName?: string
  /** `awsStsRegion`: the region of the STS endpoint for the role; also the signing region of a broker whose host name names none, after `AWS_REGION`. */
  readonly stsRegion?: string
  /** `awsDebugCreds`: log which access key id (never the secret) signs each authentication; default false. */
  readonly debugCreds: boolean
  /** The signing region for brokers whose host name names none: `AWS_REGION`/`AWS_DEFAULT_REGION` when the config was read, else `awsStsRegion`. */
  readonly fallbackRegion?: string
  /** How to name the JAAS key in messages, e.g. `B.sasl.jaas.config`. */
  readonly jaasKey: string
}

/**
 * SASL/GSSAPI (Kerberos) as Kafka's Java client does it with `Krb5LoginModule`: the client
 * authenticates as `principal` to the service `serviceName/<broker host>` of the broker's realm.
 * No secret is held here: keys stay in the keytab file (or the ticket cache) and are read by the
 * system's Kerberos library when a connection authenticates.
 */
export interface GssapiSettings {
  readonly mechanism: 'gssapi'
  /** `sasl.kerberos.service.name` (or the JAAS option `serviceName`): the primary of the brokers' principals, e.g. `kafka`. */
  readonly serviceName: string
  /** `principal`: the client principal; with a ticket cache and no principal, the cache's default one. */
  readonly principal?: string
  /**
   * Where the client's credentials come from: `keytab` (`useKeyTab=true`: tickets are obtained from
   * `keyTab` and kept in memory, the user's ticket cache is neither read nor written) or
   * `ticket-cache` (`useTicketCache=true` alone: the tickets `kinit` left in `ticketCache`, or in
   * the default cache of `KRB5CCNAME`/krb5.conf).
   */
  readonly credentials: 'keytab' | 'ticket-cache'
  /** `keyTab`: the keytab file, with `credentials: 'keytab'`. */
  readonly keyTab?: string
  /** `ticketCache`: the ticket cache, with `credentials: 'ticket-cache'`; default: the system's default cache. */
  readonly ticketCache?: string
  /** How to name the JAAS key in messages, e.g. `B.sasl.jaas.config`. */
  readonly jaasKey: string
}

/** How to reach one cluster: everything the Kafka client needs, already validated. */
export interface ClusterConnection {
  /** Name used in logs, metrics and errors (`source`, `target`, or an mm2 cluster alias). */
  readonly alias: string
  readonly brokers: readonly string[]
  readonly clientId: string
  /** TLS options, or undefined for a plaintext connection. Build with `tlsOptions()` so key material stays hidden. */
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials | OAuthBearerCredentials | AwsMskIamSettings | GssapiSettings
  /** TCP connect timeout; default 10000. */
  readonly connectionTimeoutMs?: number
  /** Per-request timeout; default 30000. */
  readonly requestTimeoutMs?: number
}

const REDACTED = '[redacted]'

/** TLS option names that hold secrets: private keys, their passphrase, PKCS#12 stores. */
export const TLS_SECRET_FIELDS = ['key', 'passphrase', 'pfx'] as const

/**
 * Defines `secrets` as non-enumerable properties and makes JSON and inspect show them as `[redacted]`,
 * and the fields of `shown` as given there instead of their value.
 */
function hideSecrets<T extends object> (visible: T, secrets: Record<string, unknown>, shown: Record<string, unknown> = {}): T {
  const names = Object.keys(secrets).filter(name => secrets[name] !== undefined)
  for (const name of names) Object.defineProperty(visible, name, { value: secrets[name], enumerable: false })
  const redacted = (): Record<string, unknown> => ({ ...visible, ...shown, ...Object.fromEntries(names.map(name => [name, REDACTED])) })
  Object.defineProperty(visible, 'toJSON', { value: redacted, enumerable: false })
  Object.defineProperty(visible, inspect.custom, { value: () => redacted(), enumerable: false })
  return visible
}

/** SASL credentials whose password is neither enumerable nor serialised. */
export function saslCredentials (mechanism: SaslMechanism, username: string, password: string): SaslCredentials {
  return hideSecrets({ mechanism, username } as SaslCredentials, { password })
}

/** OAUTHBEARER settings whose client secret is neither enumerable nor serialised; the endpoint is serialised without user-info and query. */
export function oauthBearerCredentials (settings: Omit<OAuthBearerCredentials, 'clientSecret' | 'mechanism'>, clientSecret: string): OAuthBearerCredentials {
  const shown = { tokenEndpointUrl: redactUrl(settings.tokenEndpointUrl) }
  return hideSecrets({ mechanism: 'oauthbearer', ...settings } as OAuthBearerCredentials, { clientSecret }, shown)
}

/** TLS options whose `key`, `passphrase` and `pfx` are neither enumerable nor serialised. */
export function tlsOptions (options: ConnectionOptions): ConnectionOptions {
  const visible: Record<string, unknown> = {}
  const secrets: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if ((TLS_SECRET_FIELDS as readonly string[]).includes(name)) secrets[name] = value
    else visible[name] = value
  }
  return hideSecrets(visible as ConnectionOptions, secrets)
}
