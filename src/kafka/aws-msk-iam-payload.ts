import { createRequire } from 'node:module'

type Signing = { SignatureV4: typeof import('@smithy/signature-v4').SignatureV4, Sha256: typeof import('@aws-crypto/sha256-js').Sha256 }
let signing: Signing | undefined
/** The AWS signer and its hash, loaded for the first AWS_MSK_IAM authentication: loading them costs every start some 30 ms of CPU. */
function awsSigning (): Signing {
  if (signing !== undefined) return signing
  const require = createRequire(import.meta.url)
  signing = {
    SignatureV4: (require('@smithy/signature-v4') as typeof import('@smithy/signature-v4')).SignatureV4,
    Sha256: (require('@aws-crypto/sha256-js') as typeof import('@aws-crypto/sha256-js')).Sha256,
  }
  return signing
}

/** AWS credentials as the AWS SDK's providers give them. `secretAccessKey` and `sessionToken` are secrets: never log them. */
export interface AwsCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
  /** When temporary credentials expire; undefined for long-term keys. */
  readonly expiration?: Date
}

/** The payload version of aws-msk-iam-auth's AWS_MSK_IAM mechanism, the only one MSK brokers know. */
export const AWS_MSK_IAM_VERSION = '2020_10_22'
const AWS_MSK_IAM_SERVICE = 'kafka-cluster'
const AWS_MSK_IAM_ACTION = 'kafka-cluster:Connect'
/** How long a signed payload is valid, as aws-msk-iam-auth signs it (15 minutes). */
const AWS_MSK_IAM_EXPIRES_SECONDS = 900

export interface AwsMskIamPayloadInput {
  /** The broker host name the connection was opened to (the `host` header that is signed). */
  readonly host: string
  readonly region: string
  readonly credentials: AwsCredentials
  readonly userAgent: string
  /** The signing time (epoch ms). */
  readonly nowMs: number
}

/**
 * The SASL AWS_MSK_IAM client message, as aws-msk-iam-auth (Java) and aws-msk-iam-sasl-signer-js
 * build it: a SigV4 presigned `GET https://HOST/?Action=kafka-cluster%3AConnect` (service
 * `kafka-cluster`, signed header `host`, empty body, 900 s), turned into one JSON object of
 * `version`, `host`, `user-agent`, `action` and the `x-amz-*` query parameters with lower-case
 * names. The session token is there only for temporary credentials.
 */
export async function awsMskIamPayload (input: AwsMskIamPayloadInput): Promise<Buffer> {
  const { credentials } = input
  const { SignatureV4, Sha256 } = awsSigning()
  const signer = new SignatureV4({
    service: AWS_MSK_IAM_SERVICE,
    region: input.region,
    sha256: Sha256,
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    },
    applyChecksum: false,
  })
  const signed = await signer.presign({
    method: 'GET',
    protocol: 'https:',
    hostname: input.host,
    path: '/',
    query: { Action: AWS_MSK_IAM_ACTION },
    headers: { host: input.host },
  }, { expiresIn: AWS_MSK_IAM_EXPIRES_SECONDS, signingDate: new Date(input.nowMs) })
  const query = signed.query as Record<string, string>
  const payload: Record<string, string> = {
    version: AWS_MSK_IAM_VERSION,
    host: input.host,
    'user-agent': input.userAgent,
    action: AWS_MSK_IAM_ACTION,
  }
  for (const name of ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Security-Token', 'X-Amz-SignedHeaders', 'X-Amz-Expires', 'X-Amz-Signature']) {
    const value = query[name]
    if (value !== undefined) payload[name.toLowerCase()] = value
  }
  return Buffer.from(JSON.stringify(payload), 'utf8')
}
