import { signingRegion } from '../config/aws-msk-iam-config.js'
import type { AwsMskIamSettings } from '../config/cluster-connection.js'
import { packageVersion } from '../shared/package-version.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import type { AwsCredentialsSource } from './aws-credentials-source.js'
import { AWS_MSK_IAM_VERSION, awsMskIamPayload } from './aws-msk-iam-payload.js'

/** The SASL mechanism name MSK brokers enable for IAM access control (sent in SaslHandshake). */
export const AWS_MSK_IAM_MECHANISM = 'AWS_MSK_IAM'

/** What kafkajs hands an `authenticationProvider` for one connection. */
interface AuthenticationArgs {
  readonly host: string
  readonly port: number
  readonly logger: { debug: (message: string, extra?: object) => void }
  readonly saslAuthenticate: (exchange: { request: { encode: () => Promise<Buffer> }, response: { decode: (bytes: Buffer) => Promise<Buffer>, parse: (bytes: Buffer) => Buffer } }) => Promise<Buffer | undefined>
}

/** kafkajs frames SASL bytes as Kafka BYTES: a 32-bit big-endian length, then the bytes. */
function sizePrefixed (bytes: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeInt32BE(bytes.length)
  return Buffer.concat([length, bytes])
}

function withoutSizePrefix (bytes: Buffer): Buffer {
  if (bytes.length < 4) return Buffer.alloc(0)
  const length = bytes.readInt32BE(0)
  return length < 0 ? Buffer.alloc(0) : bytes.subarray(4, 4 + length)
}

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
      const answer = await saslAuthenticate({
        request: { encode: async () => sizePrefixed(payload) },
        response: { decode: async bytes => withoutSizePrefix(bytes), parse: bytes => bytes },
      })
      if (answer === undefined || answer.length === 0) return
      let version: unknown
      try {
        version = (JSON.parse(answer.toString('utf8')) as { version?: unknown }).version
      } catch (error) {
        throw new MirrorError(ErrorCodes.AUTHENTICATION, `${host}:${port} answered AWS_MSK_IAM with no JSON (${answer.length} bytes): is this an MSK broker with IAM access control?`, { cause: error })
      }
      if (version !== AWS_MSK_IAM_VERSION) {
        throw new MirrorError(ErrorCodes.AUTHENTICATION, `${host}:${port} answered AWS_MSK_IAM with version ${JSON.stringify(version)}, expected ${AWS_MSK_IAM_VERSION}`)
      }
    },
  })
}
