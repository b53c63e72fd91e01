import { signingRegion } from '../config/aws-msk-iam-config.js'
import type { AwsMskIamSettings } from '../config/cluster-connection.js'
import { packageVersion } from '../shared/package-version.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { Logger } from '../shared/logger.js'
import type { AwsCredentialsSource } from './aws-credentials-source.js'
import { AWS_MSK_IAM_VERSION, awsMskIamPayload } from './aws-msk-iam-payload.js'
import { saslRoundTrip, type AuthenticationArgs } from './sasl-frames.js'
import type { SaslBroker, SaslExchange, SaslMechanism } from './wire/sasl-mechanism.js'

/** The SASL mechanism name MSK brokers enable for IAM access control (sent in SaslHandshake). */
export const AWS_MSK_IAM_MECHANISM = 'AWS_MSK_IAM'

/** What the mechanism logs through: kafkajs' logger or ours. */
type DebugLogger = Pick<Logger, 'debug'>

/**
 * One AWS_MSK_IAM authentication (and re-authentication, KIP-368): one SaslAuthenticate round trip carrying the
 * signed JSON payload of `awsMskIamPayload` for the host the connection was opened to; the broker answers with a
 * JSON object of `version` and `request-id`, or refuses with SASL_AUTHENTICATION_FAILED.
 */
async function authenticateAwsMskIam (
  settings: AwsMskIamSettings, credentials: AwsCredentialsSource, broker: SaslBroker, exchange: SaslExchange, logger: DebugLogger, nowMs: number
): Promise<void> {
  const { host, port } = broker
  const region = signingRegion(settings, host)
  if (region === undefined) {
    throw new MirrorError(ErrorCodes.CONFIG, `${settings.jaasKey}: the broker host ${host} names no AWS region; set AWS_REGION or awsStsRegion="REGION"`)
  }
  const userAgent = `kafka-mirror-sidecar/${packageVersion()}`
  const payload = await awsMskIamPayload({ host, region, credentials: await credentials.credentials(), userAgent, nowMs })
  logger.debug('Authenticate with SASL AWS_MSK_IAM', { broker: `${host}:${port}`, region })
  const answer = await exchange(payload)
  if (answer.length === 0) return
  let version: unknown
  try {
    version = (JSON.parse(answer.toString('utf8')) as { version?: unknown }).version
  } catch (error) {
    throw new MirrorError(
      ErrorCodes.AUTHENTICATION,
      `${host}:${port} answered AWS_MSK_IAM with no JSON (${answer.length} bytes): is this an MSK broker with IAM access control?`,
      { cause: error }
    )
  }
  if (version !== AWS_MSK_IAM_VERSION) {
    throw new MirrorError(
      ErrorCodes.AUTHENTICATION,
      `${host}:${port} answered AWS_MSK_IAM with version ${JSON.stringify(version)}, expected ${AWS_MSK_IAM_VERSION}`
    )
  }
}

/** kafkajs' `sasl.authenticationProvider` for AWS_MSK_IAM (see `authenticateAwsMskIam`), per connection and re-authentication. */
export function awsMskIamAuthenticationProvider (settings: AwsMskIamSettings, credentials: AwsCredentialsSource, now: () => number = Date.now) {
  return ({ host, port, logger, saslAuthenticate }: AuthenticationArgs) => ({
    authenticate: async (): Promise<void> => {
      await authenticateAwsMskIam(settings, credentials, { host, port }, async token => await saslRoundTrip(saslAuthenticate, token), logger, now())
    },
  })
}

/** AWS_MSK_IAM for the wire layer's `BrokerConnection` (see `authenticateAwsMskIam`); credentials shared with the kafkajs clients of the cluster. */
export function awsMskIamMechanism (
  settings: AwsMskIamSettings, credentials: AwsCredentialsSource, logger: DebugLogger, now: () => number = Date.now
): SaslMechanism {
  return {
    name: AWS_MSK_IAM_MECHANISM,
    authenticate: async (exchange, broker) => { await authenticateAwsMskIam(settings, credentials, broker, exchange, logger, now()) },
  }
}
