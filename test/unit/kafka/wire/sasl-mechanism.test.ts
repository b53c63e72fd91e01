import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MirrorError } from '../../../../src/shared/errors.js'
import { oauthBearerMechanism, plainMechanism, reauthenticationDelayMs, scramMechanism } from '../../../../src/kafka/wire/sasl-mechanism.js'

const BROKER = { host: 'broker-1.example.com', port: 9096 }

/** A scripted broker side: each token the mechanism sends is recorded and answered with the next answer. */
function scripted (answers: readonly string[]): { sent: string[], exchange: (token: Buffer) => Promise<Buffer> } {
  const sent: string[] = []
  return { sent, exchange: async token => { sent.push(token.toString('utf8')); return Buffer.from(answers[sent.length - 1] ?? '', 'utf8') } }
}

// RFC 7677, section 3: the SCRAM-SHA-256 exchange of user "user" with password "pencil".
const NONCE = 'rOprNGfwEbeRWgbNEkqO'
const SERVER_FIRST = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'
const CLIENT_FINAL = 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='
const SERVER_FINAL = 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='

test('SCRAM-SHA-256 sends RFC 7677\'s client messages for its example and accepts its server signature', async () => {
  const broker = scripted([SERVER_FIRST, SERVER_FINAL])
  await scramMechanism('SCRAM-SHA-256', 'user', 'pencil', NONCE).authenticate(broker.exchange, BROKER)
  assert.deepEqual(broker.sent, [`n,,n=user,r=${NONCE}`, CLIENT_FINAL])
})

test('SCRAM refuses a server signature made without the password, a nonce that does not extend ours, too few iterations; no secret in the error', async () => {
  const refusedWith = async (answers: string[], pattern: RegExp): Promise<void> => {
    await assert.rejects(scramMechanism('SCRAM-SHA-256', 'user', 'pencil', NONCE).authenticate(scripted(answers).exchange, BROKER), (error: MirrorError) => {
      assert.ok(error instanceof MirrorError && error.code === 'MIRROR_AUTHENTICATION')
      assert.match(error.message, pattern)
      assert.doesNotMatch(error.message, /pencil/)
      return true
    })
  }
  await refusedWith([SERVER_FIRST, 'v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='], /signature does not prove/)
  await refusedWith(['r=someoneElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'], /nonce does not extend ours/)
  await refusedWith([SERVER_FIRST.replace('i=4096', 'i=1')], /1 iterations, fewer than 4096/)
  await refusedWith([SERVER_FIRST, 'e=invalid-proof'], /the broker refused: invalid-proof/)
})

test('SCRAM escapes = and , in the user name (RFC 5802 saslname)', async () => {
  const broker = scripted(['e=unknown-user'])
  await assert.rejects(scramMechanism('SCRAM-SHA-512', 'a=b,c', 'x', NONCE).authenticate(broker.exchange, BROKER))
  assert.equal(broker.sent[0], `n,,n=a=3Db=2Cc,r=${NONCE}`)
})

test('PLAIN sends one token: NUL, user, NUL, password (RFC 4616)', async () => {
  const broker = scripted([''])
  await plainMechanism('alice', 'secret').authenticate(broker.exchange, BROKER)
  assert.deepEqual(broker.sent, ['\u0000alice\u0000secret'])
})

test('OAUTHBEARER sends one client message: gs2 header, auth=Bearer token, the extensions, each ended by ^A, then ^A (RFC 7628, KIP-342)', async () => {
  const broker = scripted([''])
  let asked = 0
  const mechanism = oauthBearerMechanism(async () => { asked++; return { value: 'eyJ.token.sig', extensions: { traceTag: 'jks', team: 'mirror' } } })
  await mechanism.authenticate(broker.exchange, BROKER)
  assert.equal(mechanism.name, 'OAUTHBEARER')
  assert.deepEqual(broker.sent, ['n,,\u0001auth=Bearer eyJ.token.sig\u0001traceTag=jks\u0001team=mirror\u0001\u0001'])
  await mechanism.authenticate(scripted(['']).exchange, BROKER)
  assert.equal(asked, 2, 'the token is asked at every authentication: a re-authentication (KIP-368) gets the current one')
})

test('OAUTHBEARER refused: the broker\'s JSON error is answered with ^A (RFC 7628 3.2.3), the failure names its status, never the token', async () => {
  const sent: string[] = []
  const exchange = async (token: Buffer): Promise<Buffer> => {
    sent.push(token.toString('utf8'))
    if (sent.length === 1) return Buffer.from('{"status":"invalid_token"}')
    throw new MirrorError('MIRROR_AUTHENTICATION', 'broker-1.example.com:9096: SASL OAUTHBEARER: authentication failed: invalid token')
  }
  await assert.rejects(oauthBearerMechanism(async () => ({ value: 'secret-token-7f1' })).authenticate(exchange, BROKER), (error: MirrorError) => {
    assert.equal(error.code, 'MIRROR_AUTHENTICATION')
    assert.match(error.message, /authentication failed: invalid token \(the broker refused the OAuth token with status "invalid_token"\)$/)
    assert.doesNotMatch(error.message, /secret-token-7f1/)
    return true
  })
  assert.deepEqual(sent.slice(1), ['\u0001'])
})

test('re-authentication (KIP-368) is due at 85 % to 95 % of the session lifetime, as Kafka\'s SaslClientAuthenticator chooses', () => {
  assert.equal(reauthenticationDelayMs(10_000, () => 0), 8_500)
  assert.equal(reauthenticationDelayMs(10_000, () => 0.5), 9_000)
  assert.equal(reauthenticationDelayMs(10_000, () => 0.999_999), 9_499)
  assert.equal(reauthenticationDelayMs(3_000, () => 0.25), 2_625)
})
