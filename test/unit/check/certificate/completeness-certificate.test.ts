import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { canonicalJson } from '../../../../src/check/certificate/canonical-json.js'
import {
  CERTIFICATE_FORMAT,
  type CertificatePayload,
  certificateText,
  parseCertificate,
  readPrivateKey,
  readPublicKey,
  signatureProblem,
  signCertificate,
  type SignedCertificate,
} from '../../../../src/check/certificate/completeness-certificate.js'
import { UsageError } from '../../../../src/check/cli/exit-codes.js'

const payload: CertificatePayload = {
  format: CERTIFICATE_FORMAT,
  tool: { name: 'mirror-check', version: '1.2.3' },
  issuedAt: '2026-01-31T12:00:00.000Z',
  verification: 'record-level',
  source: { bootstrapServers: ['src:9092'], clusterId: 'src-id' },
  target: { bootstrapServers: ['dst:9092'], clusterId: 'dst-id' },
  topics: [{
    sourceTopic: 'orders',
    targetTopic: 'orders',
    ranges: [
      {
        partition: 0,
        sourceFromOffset: 0,
        sourceUntilOffset: 10,
        targetPartition: 0,
        targetFromOffset: 5,
        targetUntilOffset: 15,
        records: 10,
        sha256: 'a'.repeat(64),
      },
    ],
  }],
}

test('canonical JSON sorts keys at every depth, writes no whitespace and refuses what JSON cannot round-trip exactly', () => {
  assert.equal(canonicalJson({ b: 1, a: [{ d: 'x', c: null }, true], é: '"q"', A: -2 }), '{"A":-2,"a":[{"c":null,"d":"x"},true],"b":1,"é":"\\"q\\""}')
  assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }))
  assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}')
  assert.throws(() => canonicalJson({ a: 1.5 }), /safe integers/)
  assert.throws(() => canonicalJson({ a: 2 ** 60 }), /safe integers/)
  assert.throws(() => canonicalJson({ a: 1n }), /bigint/)
})

test('a signed certificate verifies with its public key, and not with another key or after any change of its payload', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const other = generateKeyPairSync('ed25519').publicKey
  const signed = signCertificate(payload, privateKey)
  assert.equal(signatureProblem(signed, publicKey), undefined)
  // Ed25519 is deterministic: the same payload and key give the same signature (reproducible).
  assert.equal(signCertificate({ ...payload }, privateKey).signature.value, signed.signature.value)
  assert.match(signatureProblem(signed, other) ?? '', /another key/)
  const changed: SignedCertificate = { ...signed, payload: { ...payload, issuedAt: '2026-01-31T12:00:00.001Z' } }
  assert.match(signatureProblem(changed, publicKey) ?? '', /altered/)
})

test('parseCertificate accepts the text certificateText writes and refuses every one-byte change of it', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const text = certificateText(signCertificate(payload, privateKey))
  const parsed = parseCertificate(text)
  assert.ok(!('problem' in parsed))
  assert.equal(signatureProblem(parsed, publicKey), undefined)
  const bytes = Buffer.from(text, 'utf8')
  for (let i = 0; i < bytes.length; i++) {
    const tampered = Buffer.from(bytes)
    tampered[i] = tampered[i] === 0x30 ? 0x31 : 0x30
    const result = parseCertificate(tampered.toString('utf8'))
    const problem = 'problem' in result ? result.problem : signatureProblem(result, publicKey)
    assert.notEqual(problem, undefined, `byte ${i} changed from ${text[i]} still verifies`)
  }
  assert.match((parseCertificate(JSON.stringify(JSON.parse(text), null, 2)) as { problem: string }).problem, /canonical form/)
})

test('signing and public keys are read from PEM files; anything else is one usage line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certificate-keys-'))
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  writeFileSync(join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }))
  writeFileSync(join(dir, 'key.pub'), publicKey.export({ type: 'spki', format: 'pem' }))
  writeFileSync(join(dir, 'rsa.pem'), generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }))
  writeFileSync(join(dir, 'junk.pem'), 'not a key')
  assert.equal(readPrivateKey(join(dir, 'key.pem')).asymmetricKeyType, 'ed25519')
  assert.equal(readPublicKey(join(dir, 'key.pub')).asymmetricKeyType, 'ed25519')
  assert.throws(() => readPrivateKey(join(dir, 'rsa.pem')), (e: unknown) => e instanceof UsageError && /a rsa key, expected ed25519/.test(e.message))
  const usage = (pattern: RegExp) => (e: unknown) => e instanceof UsageError && pattern.test(e.message)
  assert.throws(() => readPrivateKey(join(dir, 'junk.pem')), usage(/--signing-key ".*junk.pem": not a PEM private key/))
  assert.throws(() => readPublicKey(join(dir, 'missing.pub')), usage(/--public-key ".*missing.pub": cannot read it \(ENOENT\)/))
})
