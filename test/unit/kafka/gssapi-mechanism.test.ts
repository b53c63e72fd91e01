import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import kafkajs from '@kafka-mirror-sidecar/kafkajs'
import type { GssapiSettings } from '../../../src/config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../../../src/shared/errors.js'
import { GSSAPI_MECHANISM, gssapiAuthenticationProvider, kerberosError } from '../../../src/kafka/gssapi-mechanism.js'
import { GssapiCredentials, loadKerberosLibrary, type GssClientContext, type KerberosLibrary } from '../../../src/kafka/kerberos-library.js'
import { toMirrorError } from '../../../src/kafka/errors.js'
import { FakeSaslBroker } from '../../helpers/fake-sasl-broker.js'

const SETTINGS: GssapiSettings = {
  mechanism: 'gssapi',
  serviceName: 'kafka',
  principal: 'mirror@EXAMPLE.COM',
  credentials: 'keytab',
  keyTab: '/etc/security/mirror.keytab',
  jaasKey: 'c.properties: sasl.jaas.config',
}

/**
 * Stands in for the GSS-API of the `kerberos` package, with the token shapes of a Kerberos
 * exchange: the first step gives an AP-REQ, the broker's AP-REP completes the context, wrapped
 * messages are "W" + the plain bytes, and `wrap` with a user answers a security-layer offer as the
 * package does (first byte "no security layer", the offer's size, then the user).
 */
function fakeLibrary (seen: { services: string[], environments: Array<Record<string, string | undefined>> }): KerberosLibrary {
  return {
    GSS_MECH_OID_KRB5: 9,
    initializeClient: async (service, options) => {
      seen.services.push(`${service} as ${options.principal ?? '(default)'}`)
      seen.environments.push({ KRB5_CLIENT_KTNAME: process.env.KRB5_CLIENT_KTNAME, KRB5CCNAME: process.env.KRB5CCNAME })
      const context: GssClientContext & { contextComplete: boolean, username: string } = {
        contextComplete: false,
        username: '',
        step: async challenge => {
          if (challenge === '') return Buffer.from('AP-REQ').toString('base64')
          if (Buffer.from(challenge, 'base64').toString() !== 'AP-REP') {
            throw new Error('Unspecified GSS failure.  Minor code may provide more information: bad AP-REP')
          }
          context.contextComplete = true
          context.username = 'mirror@EXAMPLE.COM'
          return null
        },
        unwrap: async challenge => Buffer.from(challenge, 'base64').subarray(1).toString('base64'),
        wrap: async (challenge, { user }) => {
          const offer = Buffer.from(challenge, 'base64')
          return Buffer.concat([Buffer.from('W'), Buffer.from([0x01]), offer.subarray(1, 4), Buffer.from(user ?? '')]).toString('base64')
        },
      }
      return context
    },
  }
}

/** A broker that runs the Kerberos side of RFC 4752 against the fake tokens: AP-REP, the offer, then the client's choice. */
async function gssapiBroker (t: TestContext, offerLayers: number): Promise<{ broker: FakeSaslBroker, rounds: string[] }> {
  const rounds: string[] = []
  const broker = new FakeSaslBroker('GSSAPI', bytes => {
    rounds.push(bytes.toString('latin1'))
    if (bytes.toString() === 'AP-REQ') return { bytes: Buffer.from('AP-REP') }
    if (bytes.length === 0) return { bytes: Buffer.concat([Buffer.from('W'), Buffer.from([offerLayers, 0x01, 0x00, 0x00])]) }
    if (bytes.toString('latin1') === 'W\x01\x01\x00\x00mirror@EXAMPLE.COM') return { bytes: Buffer.alloc(0) }
    return { error: 'unexpected token' }
  })
  await broker.start()
  t.after(async () => { await broker.stop() })
  return { broker, rounds }
}

function adminFor (port: number, credentials: GssapiCredentials): kafkajs.Admin {
  return new kafkajs.Kafka({
    clientId: 'gssapi-test',
    brokers: [`127.0.0.1:${port}`],
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 0 },
    sasl: { mechanism: GSSAPI_MECHANISM, authenticationProvider: gssapiAuthenticationProvider(SETTINGS, credentials) } as never,
  }).admin()
}

test(
  "GSSAPI against a fake broker: AP-REQ, AP-REP, then RFC 4752's final handshake choosing no security layer with the principal as authorization id; the keytab and a memory cache set only while the context takes its credentials",
  async t => {
    const { broker, rounds } = await gssapiBroker(t, 0x07)
    const seen = { services: [] as string[], environments: [] as Array<Record<string, string | undefined>> }
    const before = { KRB5_CLIENT_KTNAME: process.env.KRB5_CLIENT_KTNAME, KRB5CCNAME: process.env.KRB5CCNAME }
    const admin = adminFor(broker.port, new GssapiCredentials(SETTINGS, fakeLibrary(seen)))
    await admin.connect()
    await admin.disconnect()
    assert.deepEqual(broker.mechanisms.slice(0, 1), ['GSSAPI'])
    assert.deepEqual(rounds.slice(0, 3), ['AP-REQ', '', 'W\x01\x01\x00\x00mirror@EXAMPLE.COM'])
    assert.equal(seen.services[0], 'kafka@127.0.0.1 as mirror@EXAMPLE.COM')
    assert.equal(seen.environments[0]?.KRB5_CLIENT_KTNAME, 'FILE:/etc/security/mirror.keytab')
    assert.match(seen.environments[0]?.KRB5CCNAME ?? '', /^MEMORY:kafka-mirror-sidecar-\d+-\d+$/)
    assert.deepEqual({ KRB5_CLIENT_KTNAME: process.env.KRB5_CLIENT_KTNAME, KRB5CCNAME: process.env.KRB5CCNAME }, before)
  }
)

test('GSSAPI: a broker that offers only a security layer (qop auth-int/auth-conf) is refused with what to change', async t => {
  const { broker } = await gssapiBroker(t, 0x04)
  const seen = { services: [] as string[], environments: [] as Array<Record<string, string | undefined>> }
  const error = await adminFor(broker.port, new GssapiCredentials(SETTINGS, fakeLibrary(seen))).connect().then(() => undefined, (e: unknown) => e)
  const converted = toMirrorError(error, 'the source cluster', ErrorCodes.KAFKA, { sasl: SETTINGS })
  assert.equal(converted.code, ErrorCodes.AUTHENTICATION)
  assert.match(
    converted.message,
    /c\.properties: sasl\.jaas\.config: the broker 127\.0\.0\.1:\d+ requires a SASL security layer \(qop auth-int or auth-conf\), which the sidecar does not speak; use qop auth/
  )
})

test('GSSAPI: contexts of two connections with different keytabs are made one at a time, each under its own environment', async () => {
  const seen = { services: [] as string[], environments: [] as Array<Record<string, string | undefined>> }
  const library = fakeLibrary(seen)
  const other: GssapiSettings = { ...SETTINGS, principal: 'other@EXAMPLE.COM', keyTab: '/etc/security/other.keytab' }
  const a = new GssapiCredentials(SETTINGS, library)
  const b = new GssapiCredentials(other, library)
  await Promise.all([a.start('b1'), b.start('b2'), a.start('b3')])
  assert.deepEqual(seen.services, ['kafka@b1 as mirror@EXAMPLE.COM', 'kafka@b2 as other@EXAMPLE.COM', 'kafka@b3 as mirror@EXAMPLE.COM'])
  assert.deepEqual(
    seen.environments.map(env => env.KRB5_CLIENT_KTNAME),
    ['FILE:/etc/security/mirror.keytab', 'FILE:/etc/security/other.keytab', 'FILE:/etc/security/mirror.keytab']
  )
  assert.equal(seen.environments[0]?.KRB5CCNAME, seen.environments[2]?.KRB5CCNAME, 'one memory cache per connection, kept between contexts')
  assert.notEqual(seen.environments[0]?.KRB5CCNAME, seen.environments[1]?.KRB5CCNAME)
})

test('the kerberos package missing: one line naming the JAAS key and how to install it', () => {
  const missing = Object.assign(new Error('Cannot find module \'kerberos\''), { code: 'MODULE_NOT_FOUND' })
  const error = (() => { try { loadKerberosLibrary(SETTINGS, () => { throw missing }) } catch (e) { return e } })() as MirrorError
  assert.equal(error.code, ErrorCodes.CONFIG)
  assert.match(
    error.message,
    /^c\.properties: sasl\.jaas\.config: sasl\.mechanism=GSSAPI needs the optional npm package kerberos, which is not installed; install it where the sidecar is installed: npm install kerberos .*apt-get install build-essential libkrb5-dev/
  )
  assert.equal(error.message.includes('\n'), false)
  const broken = (() => {
    try {
      loadKerberosLibrary(SETTINGS, () => {
        throw new Error('libgssapi_krb5.so.2: cannot open shared object file\nmore')
      })
    } catch (e) {
      return e
    }
  })() as MirrorError
  assert.match(broken.message, /which does not load \(libgssapi_krb5\.so\.2: cannot open shared object file\)/)
})

test('Kerberos failures read as what to fix; an unreachable KDC is retriable, a refused key is not', () => {
  const gss = (minor: string): Error => new Error(`Unspecified GSS failure.  Minor code may provide more information: ${minor}`)
  const cases: Array<[Error, RegExp, boolean]> = [
    [
      new Error('No credentials were supplied, or the credentials were unavailable or inaccessible: Decrypt integrity check failed'),
      /the KDC refused the key of principal "mirror@EXAMPLE\.COM" in keytab "\/etc\/security\/mirror\.keytab" \(Decrypt integrity check failed\): the keytab is out of date/,
      false,
    ],
    [
      new Error("No credentials were supplied, or the credentials were unavailable or inaccessible: Client's entry in database has expired"),
      /the KDC refused principal "mirror@EXAMPLE\.COM" \(Client's entry in database has expired\); ask the Kerberos administrator/,
      false,
    ],
    [
      gss('Server kafka/b1.example.com@EXAMPLE.COM not found in Kerberos database'),
      /the KDC has no service principal for the broker b1:9092 \(Server kafka\/b1\.example\.com@EXAMPLE\.COM not found in Kerberos database\); sasl\.kerberos\.service\.name must be/,
      false,
    ],
    [
      new Error("No credentials were supplied, or the credentials were unavailable or inaccessible: Cannot contact any KDC for realm 'EXAMPLE.COM'"),
      /cannot reach the KDC to authenticate to b1:9092/,
      true,
    ],
    [gss('Clock skew too great'), /this host's clock and the KDC's differ/, false],
  ]
  for (const [error, message, retriable] of cases) {
    const converted = kerberosError(SETTINGS, 'b1:9092', error)
    assert.match(converted.message, new RegExp(`^c\\.properties: sasl\\.jaas\\.config: ${message.source}`))
    assert.equal(converted.retriable, retriable, converted.message)
    assert.equal(converted.code, retriable ? ErrorCodes.CONNECTION : ErrorCodes.AUTHENTICATION)
  }
})
