import type { GssapiSettings } from '../config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import type { GssapiCredentials } from './kerberos-library.js'
import { saslRoundTrip, type AuthenticationArgs } from './sasl-frames.js'
import type { SaslBroker, SaslExchange, SaslMechanism } from './wire/sasl-mechanism.js'

/** The SASL mechanism name of Kerberos (RFC 4752), sent in SaslHandshake. */
export const GSSAPI_MECHANISM = 'GSSAPI'

/** RFC 4752 3.3: bit of the security-layer offer for "no security layer", the one layer the sidecar takes (qop auth). */
const NO_SECURITY_LAYER = 0x01

/** Round trips of the context exchange before giving up (Kerberos needs one, or two with mutual authentication). */
const MAX_CONTEXT_ROUND_TRIPS = 5

/** What the Kerberos library says when the client holds no valid ticket. */
const NO_VALID_TICKET =
  /Ticket expired|not found in cache collection|No Kerberos credentials available|No credentials cache found|Credentials cache .*not found|Can't find client principal/i

/** Where a Kerberos failure is explained: the krb5.conf the library read. */
function krb5Conf (): string {
  return process.env.KRB5_CONFIG ?? '/etc/krb5.conf'
}

/**
 * A GSS-API failure as one line that says what to fix: the KDC's refusal of the keytab or the
 * principal, an unknown service principal, no tickets, an unreachable KDC (retriable), clocks apart.
 */
export function kerberosError (settings: GssapiSettings, broker: string, error: unknown): MirrorError {
  const reason = String((error as Error)?.message ?? error).replace(/\s+/g, ' ').trim()
  const detail = reason.replace(/^.*?(?:Minor code may provide more information|or inaccessible): /, '')
  const who = settings.principal === undefined ? 'the ticket cache\'s principal' : `principal "${settings.principal}"`
  const credentials =
    settings.credentials === 'keytab'
      ? `keytab "${settings.keyTab ?? ''}"`
      : `ticket cache ${settings.ticketCache === undefined ? '(KRB5CCNAME or the default one)' : `"${settings.ticketCache}"`}`
  const fail = (message: string, retriable = false): MirrorError =>
    new MirrorError(retriable ? ErrorCodes.CONNECTION : ErrorCodes.AUTHENTICATION, `${settings.jaasKey}: ${message}`, { retriable, cause: error })
  if (/Decrypt integrity check failed|Preauthentication failed|Password incorrect|Key version .* not available|Bad encryption type/i.test(detail)) {
    return fail(
      `the KDC refused the key of ${who} in ${credentials} (${detail}): the keytab is out of date (the principal's key was changed after it was exported) or is another principal's; export it again (kadmin ktadd -k FILE PRINCIPAL, ipa-getkeytab, ktpass)`
    )
  }
  if (/entry in database has expired|credentials have been revoked|Password has expired|Client's.*(locked|disabled)/i.test(detail)) {
    return fail(`the KDC refused ${who} (${detail}); ask the Kerberos administrator to renew or unlock the principal`)
  }
  if (/Client .* not found in Kerberos database/i.test(detail)) {
    return fail(`the KDC does not know ${who} (${detail}); check principal (and its realm) in sasl.jaas.config`)
  }
  if (/Server .* not found in Kerberos database/i.test(detail)) {
    return fail(
      `the KDC has no service principal for the broker ${broker} (${detail}); sasl.kerberos.service.name must be the primary of the brokers' principals (${settings.serviceName}), and the client must reach the broker by the host name in its principal (bootstrap.servers, the brokers' advertised.listeners)`
    )
  }
  if (/Cannot contact any KDC|Resource temporarily unavailable|Connection refused/i.test(detail)) {
    return fail(
      `cannot reach the KDC to authenticate to ${broker} (${detail}); check that the KDC is up and the kdc entries of the realm in ${krb5Conf()}`,
      true
    )
  }
  if (/Cannot find KDC|Configuration file does not specify default realm|Cannot resolve network address for KDC/i.test(detail)) {
    return fail(
      `Kerberos is not configured for this realm (${detail}); set KRB5_CONFIG to a krb5.conf naming the realm and its KDC (the file the Java clients get as -Djava.security.krb5.conf), now ${krb5Conf()}`
    )
  }
  if (/Clock skew too great/i.test(detail)) {
    return fail(`this host's clock and the KDC's differ by more than the allowed skew (${detail}); synchronise the clock (NTP)`)
  }
  if (NO_VALID_TICKET.test(detail)) {
    const what = settings.credentials === 'keytab' ? `the ${credentials} gave no ticket for ${who}` : `the ${credentials} holds no valid ticket for ${who}`
    return fail(
      `${what} (${detail}); ${settings.credentials === 'keytab' ? 'check keyTab and principal' : `run kinit${settings.ticketCache === undefined ? '' : ` -c ${settings.ticketCache}`} again, or use useKeyTab=true with keyTab and principal`}`
    )
  }
  return fail(`Kerberos authentication to ${broker} failed: ${detail}`)
}

/**
 * One GSSAPI authentication, as Kafka's Java client does it (its `SaslClientAuthenticator` with the JDK's GSS-API
 * Kerberos client): the Kerberos context is established over SaslAuthenticate round trips (AP-REQ, the broker's
 * AP-REP for mutual authentication, then an empty token), then the RFC 4752 final handshake: the broker's wrapped
 * security-layer offer is unwrapped, "no security layer" is chosen (qop auth: the connection is protected by TLS
 * with SASL_SSL, not by SASL), and the answer goes back wrapped with the authenticated principal as authorization
 * id. Runs per connection and per re-authentication (KIP-368), each time with a new context.
 */
async function authenticateGssapi (
  settings: GssapiSettings, credentials: GssapiCredentials, { host, port }: SaslBroker, exchange: SaslExchange, logger: Pick<Logger, 'debug'>
): Promise<void> {
  const broker = `${host}:${port}`
  logger.debug('Authenticate with SASL GSSAPI', {
    broker,
    service: `${settings.serviceName}/${host}`,
    ...(settings.principal === undefined ? {} : { principal: settings.principal }),
  })
  const gss = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step()
    } catch (error) {
      throw kerberosError(settings, broker, error)
    }
  }
  const { context, token: first } = await gss(async () => await credentials.start(host))
  let token = first
  let answer: Buffer = Buffer.alloc(0)
  for (let round = 1; ; round++) {
    answer = await exchange(Buffer.from(token, 'base64'))
    if (context.contextComplete) break
    if (round >= MAX_CONTEXT_ROUND_TRIPS) {
      throw new MirrorError(
        ErrorCodes.AUTHENTICATION,
        `${settings.jaasKey}: the broker ${broker} did not complete the Kerberos context in ${MAX_CONTEXT_ROUND_TRIPS} round trips`
      )
    }
    token = await gss(async () => await context.step(answer.toString('base64'))) ?? ''
  }
  // The context is established: `answer` is the broker's wrapped security-layer offer (RFC 4752 3.1).
  if (answer.length === 0) {
    throw new MirrorError(
      ErrorCodes.AUTHENTICATION,
      `${settings.jaasKey}: the broker ${broker} sent no security-layer offer after the Kerberos context was established`
    )
  }
  const offer = await gss(async () => await context.unwrap(answer.toString('base64')))
  const offered = Buffer.from(offer, 'base64')
  if (offered.length !== 4) {
    throw new MirrorError(
      ErrorCodes.AUTHENTICATION,
      `${settings.jaasKey}: the broker ${broker} sent a security-layer offer of ${offered.length} bytes (RFC 4752: 4)`
    )
  }
  if (((offered[0] as number) & NO_SECURITY_LAYER) === 0) {
    throw new MirrorError(
      ErrorCodes.AUTHENTICATION,
      `${settings.jaasKey}: the broker ${broker} requires a SASL security layer (qop auth-int or auth-conf), which the sidecar does not speak; use qop auth on the broker's listener (Kafka's default) and SASL_SSL for encryption`
    )
  }
  const choice = await gss(async () => await context.wrap(offer, { user: context.username }))
  await exchange(Buffer.from(choice, 'base64'))
}

/** kafkajs' `sasl.authenticationProvider` for GSSAPI (see `authenticateGssapi`), per connection and re-authentication. */
export function gssapiAuthenticationProvider (settings: GssapiSettings, credentials: GssapiCredentials) {
  return ({ host, port, logger, saslAuthenticate }: AuthenticationArgs) => ({
    authenticate: async (): Promise<void> => {
      await authenticateGssapi(settings, credentials, { host, port }, async token => await saslRoundTrip(saslAuthenticate, token), logger)
    },
  })
}

/** GSSAPI for the wire layer's `BrokerConnection` (see `authenticateGssapi`); credentials shared with the kafkajs clients of the cluster. */
export function gssapiMechanism (settings: GssapiSettings, credentials: GssapiCredentials, logger: Pick<Logger, 'debug'>): SaslMechanism {
  return {
    name: GSSAPI_MECHANISM,
    authenticate: async (exchange, broker) => { await authenticateGssapi(settings, credentials, broker, exchange, logger) },
  }
}
