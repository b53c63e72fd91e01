import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MirrorError } from '../../../../src/shared/errors.js'
import { plainMechanism, scramMechanism } from '../../../../src/kafka/wire/sasl-mechanism.js'

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
  await scramMechanism('SCRAM-SHA-256', 'user', 'pencil', NONCE).authenticate(broker.exchange)
  assert.deepEqual(broker.sent, [`n,,n=user,r=${NONCE}`, CLIENT_FINAL])
})

test('SCRAM refuses a server signature made without the password, a nonce that does not extend ours, too few iterations; no secret in the error', async () => {
  const refusedWith = async (answers: string[], pattern: RegExp): Promise<void> => {
    await assert.rejects(scramMechanism('SCRAM-SHA-256', 'user', 'pencil', NONCE).authenticate(scripted(answers).exchange), (error: MirrorError) => {
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
  await assert.rejects(scramMechanism('SCRAM-SHA-512', 'a=b,c', 'x', NONCE).authenticate(broker.exchange))
  assert.equal(broker.sent[0], `n,,n=a=3Db=2Cc,r=${NONCE}`)
})

test('PLAIN sends one token: NUL, user, NUL, password (RFC 4616)', async () => {
  const broker = scripted([''])
  await plainMechanism('alice', 'secret').authenticate(broker.exchange)
  assert.deepEqual(broker.sent, ['\u0000alice\u0000secret'])
})
