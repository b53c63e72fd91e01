import { createHash, createHmac } from 'node:crypto'

/**
 * SigV4 query signing written from AWS's documented algorithm (canonical request, string to sign,
 * derived signing key), with node:crypto only: the independent reference the AWS_MSK_IAM payload
 * is checked against.
 */
export function uriEncode (text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')
const hmac = (key: Buffer | string, text: string): Buffer => createHmac('sha256', key).update(text, 'utf8').digest()

/** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
export function signingKey (secretAccessKey: string, dateStamp: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, dateStamp), region), service), 'aws4_request')
}

/** The hex signature of a presigned GET of `https://host/` with `query` (X-Amz-Signature excluded), signed header `host`, empty body. */
export function presignedGetSignature (input: {
  host: string
  query: Record<string, string>
  secretAccessKey: string
  region: string
  service: string
  amzDate: string
}): string {
  const canonicalQuery = Object.keys(input.query)
    .sort()
    .map(name => `${uriEncode(name)}=${uriEncode(input.query[name] as string)}`)
    .join('&')
  const canonicalRequest = ['GET', '/', canonicalQuery, `host:${input.host}`, '', 'host', sha256Hex('')].join('\n')
  const dateStamp = input.amzDate.slice(0, 8)
  const scope = `${dateStamp}/${input.region}/${input.service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', input.amzDate, scope, sha256Hex(canonicalRequest)].join('\n')
  return createHmac('sha256', signingKey(input.secretAccessKey, dateStamp, input.region, input.service))
    .update(stringToSign, 'utf8')
    .digest('hex')
}

/** Checks an AWS_MSK_IAM JSON payload's signature with `secretAccessKey`; returns the problem, or undefined when it is right. */
export function checkAwsMskIamPayload (payload: Record<string, string>, secretAccessKey: string): string | undefined {
  const credential = payload['x-amz-credential'] ?? ''
  const [, dateStamp, region, service, terminal] = credential.split('/')
  if (terminal !== 'aws4_request' || service !== 'kafka-cluster' || region === undefined) return `bad credential scope ${credential}`
  if (payload['x-amz-date']?.slice(0, 8) !== dateStamp) return 'x-amz-date does not match the credential scope'
  const query: Record<string, string> = {
    Action: payload.action as string,
    'X-Amz-Algorithm': payload['x-amz-algorithm'] as string,
    'X-Amz-Credential': credential,
    'X-Amz-Date': payload['x-amz-date'] as string,
    'X-Amz-Expires': payload['x-amz-expires'] as string,
    'X-Amz-SignedHeaders': payload['x-amz-signedheaders'] as string,
    ...(payload['x-amz-security-token'] === undefined ? {} : { 'X-Amz-Security-Token': payload['x-amz-security-token'] }),
  }
  const expected = presignedGetSignature({ host: payload.host as string, query, secretAccessKey, region, service, amzDate: payload['x-amz-date'] as string })
  return expected === payload['x-amz-signature'] ? undefined : `signature ${payload['x-amz-signature']} is not the expected ${expected}`
}
