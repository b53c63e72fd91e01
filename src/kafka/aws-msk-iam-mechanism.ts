import { signingRegion } from '../config/aws-msk-iam-config.js'
import type { AwsMskIamSettings } from '../config/cluster-connection.js'
import { packageVersion } from '../shared/package-version.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { AwsCredentialsSource } from './aws-credentials-source.js'
import { AWS_MSK_IAM_VERSION, awsMskIamPayload } from './aws-msk-iam-payload.js'
import { saslRoundTrip, type AuthenticationArgs } from './sasl-frames.js'

/** The SASL mechanism name MSK brokers enable for IAM access control (sent in SaslHandshake). */
export const AWS_MSK_IAM_MECHANISM = 'AWS_MSK_IAM'

/**
 * kafkajs' `sasl.authenticationProvider` for AWS_MSK_IAM: one SaslAuthenticate round trip per
 * connection (and re-authentication, KIP-368) carrying the signed JSON payload of
 * `awsMskIamPayload` for the host this connection was opened to; the broker answers with a JSON
 * object of `version` and `request-id`, or refuses with SASL_AUTHENTICATION_FAILED.
 */
export function awsMskIamAuthenticationProvider (settings: AwsMskIamSettings, credentials: AwsCredentialsSource, now: () => number = Date.now) {
  const userAgent = `kafka-mirror-sidecar/${packageVersion()}`
  return ({ host, port, logger, saslAuthenticate }: AuthenticationArgs) => ({
    authenticate: async (): Promise<void> => {
      const region = signingRegion(settings, host)
      if (region === undefined) {
        throw new MirrorError(ErrorCodes.CONFIG, `${settings.jaasKey}: the broker host ${host} names no AWS region; set AWS_REGION or awsStsRegion="REGION"`)
      }
      const payload = await awsMskIamPayload({ host, region, credentials: await credentials.credentials(), userAgent, nowMs: now() })
      logger.debug('Authenticate with SASL AWS_MSK_IAM', { broker: `${host}:${port}`, region })
      const answer = await saslRoundTrip(saslAuthenticate, payload)
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
    },
  })
}
