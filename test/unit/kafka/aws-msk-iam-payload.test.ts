import assert from 'node:assert/strict'
import { test } from 'node:test'
import { awsMskIamPayload } from '../../../src/kafka/aws-msk-iam-payload.js'
import { checkAwsMskIamPayload, presignedGetSignature, signingKey } from '../../helpers/sigv4.js'

// AWS's documentation example credentials: not a real key.
const ACCESS_KEY_ID = 'AKIDEXAMPLE'
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
const TOKEN = 'IQoJb3JpZ2luX2VjEXAMPLE/token+with=chars'
const HOST = 'b-1.mirror.abc123.c2.kafka.eu-west-1.amazonaws.com'
const NOW_MS = Date.UTC(2026, 1, 3, 4, 5, 6)

test('the reference signer derives the signing key of AWS\'s documented example', () => {
  // From AWS's SigV4 documentation ("derive a signing key"): 20120215, us-east-1, iam.
  assert.equal(
    signingKey('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', '20120215', 'us-east-1', 'iam').toString('hex'),
    'f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d'
  )
})

test('AWS_MSK_IAM payload: the documented JSON fields, signed as SigV4 computes independently (fixed credentials and clock)', async () => {
  const bytes = await awsMskIamPayload({
    host: HOST,
    region: 'eu-west-1',
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN },
    userAgent: 'kafka-mirror-sidecar/test',
    nowMs: NOW_MS,
  })
  const payload = JSON.parse(bytes.toString('utf8')) as Record<string, string>
  assert.deepEqual(Object.keys(payload).sort(), [
    'action',
    'host',
    'user-agent',
    'version',
    'x-amz-algorithm',
    'x-amz-credential',
    'x-amz-date',
    'x-amz-expires',
    'x-amz-security-token',
    'x-amz-signature',
    'x-amz-signedheaders',
  ])
  const { 'x-amz-signature': signature, ...rest } = payload
  assert.deepEqual(rest, {
    version: '2020_10_22',
    host: HOST,
    'user-agent': 'kafka-mirror-sidecar/test',
    action: 'kafka-cluster:Connect',
    'x-amz-algorithm': 'AWS4-HMAC-SHA256',
    'x-amz-credential': `${ACCESS_KEY_ID}/20260203/eu-west-1/kafka-cluster/aws4_request`,
    'x-amz-date': '20260203T040506Z',
    'x-amz-expires': '900',
    'x-amz-security-token': TOKEN,
    'x-amz-signedheaders': 'host',
  })
  const expected = presignedGetSignature({
    host: HOST,
    query: {
      Action: 'kafka-cluster:Connect',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': `${ACCESS_KEY_ID}/20260203/eu-west-1/kafka-cluster/aws4_request`,
      'X-Amz-Date': '20260203T040506Z',
      'X-Amz-Expires': '900',
      'X-Amz-Security-Token': TOKEN,
      'X-Amz-SignedHeaders': 'host',
    },
    secretAccessKey: SECRET,
    region: 'eu-west-1',
    service: 'kafka-cluster',
    amzDate: '20260203T040506Z',
  })
  assert.match(signature as string, /^[0-9a-f]{64}$/)
  assert.equal(signature, expected)
  assert.equal(checkAwsMskIamPayload(payload, SECRET), undefined)
  assert.doesNotMatch(bytes.toString('utf8'), /wJalrXUtnFEMI/)
})

test('AWS_MSK_IAM payload with long-term keys has no session token', async () => {
  const bytes = await awsMskIamPayload({
    host: HOST,
    region: 'eu-west-1',
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET },
    userAgent: 'ua',
    nowMs: NOW_MS,
  })
  const payload = JSON.parse(bytes.toString('utf8')) as Record<string, string>
  assert.equal(payload['x-amz-security-token'], undefined)
  assert.equal(checkAwsMskIamPayload(payload, SECRET), undefined)
  assert.match(checkAwsMskIamPayload(payload, 'another-secret') ?? '', /is not the expected/)
})
