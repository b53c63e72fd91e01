import { withFreshPortsOnBindError } from './kafka.js'
import { REALM, type MitKdc } from './kdc.js'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { LocalCluster, freePortPair, portAnswers } from '../../scripts/local-kafka/clusters.js'

/** Passwords of the PKCS12 stores `makeCertificates` writes (test values, never printed by the sidecar). */
export const STORE_PASSWORDS = { keystore: 'p12-keystore-pw-8d2e', truststore: 'p12-truststore-pw-31ab' } as const

/**
 * Stores made with openssl for one test run: a CA, a server certificate for 127.0.0.1/localhost,
 * an unrelated CA, and client certificates in PEM and PKCS12 for mutual TLS.
 */
export interface TestCertificates {
  readonly dir: string
  /** The CA that signed the server certificate (PEM). */
  readonly caPem: string
  /** A CA nobody used: trusting only it must fail. */
  readonly otherCaPem: string
  /** Server key + certificate + CA in one PEM file (the broker's PEM keystore). */
  readonly serverKeystorePem: string
  /** A client key and certificate signed by the CA (PEM), for mutual TLS. */
  readonly clientKeyPem: string
  readonly clientCertPem: string
  /** Client key + certificate + CA in one PEM file (a PEM keystore with its chain). */
  readonly clientKeystorePem: string
  /** The same client key and chain as PKCS12, password `STORE_PASSWORDS.keystore`. */
  readonly clientKeystoreP12: string
  /** The CA certificate as a PKCS12 truststore, password `STORE_PASSWORDS.truststore`. */
  readonly truststoreP12: string
  /** A client key + certificate signed by the unrelated CA (PEM keystore): brokers trusting the test CA refuse it. */
  readonly foreignClientKeystorePem: string
}

function openssl (dir: string, args: string[], env: NodeJS.ProcessEnv = {}): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
}

export function makeCertificates (): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'mirror-tls-'))
  const days = '2'
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', days, '-subj', '/CN=mirror-test-ca'])
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'other-ca.key',
    '-out',
    'other-ca.pem',
    '-days',
    days,
    '-subj',
    '/CN=mirror-other-ca',
  ])
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'])
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    days,
    '-extfile',
    'san.ext',
  ])
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=mirror-client'])
  openssl(dir, ['x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.pem', '-days', days])
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'foreign-client.key', '-out', 'foreign-client.csr', '-subj', '/CN=mirror-foreign-client'])
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'foreign-client.csr',
    '-CA',
    'other-ca.pem',
    '-CAkey',
    'other-ca.key',
    '-CAcreateserial',
    '-out',
    'foreign-client.pem',
    '-days',
    days,
  ])
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8')
  writeFileSync(join(dir, 'server-keystore.pem'), read('server.key') + read('server.pem') + read('ca.pem'))
  writeFileSync(join(dir, 'client-keystore.pem'), read('client.key') + read('client.pem') + read('ca.pem'))
  writeFileSync(join(dir, 'foreign-client-keystore.pem'), read('foreign-client.key') + read('foreign-client.pem') + read('other-ca.pem'))
  const passwords = { MIRROR_TEST_KEYSTORE_PW: STORE_PASSWORDS.keystore, MIRROR_TEST_TRUSTSTORE_PW: STORE_PASSWORDS.truststore }
  openssl(
    dir,
    [
      'pkcs12',
      '-export',
      '-inkey',
      'client.key',
      '-in',
      'client.pem',
      '-certfile',
      'ca.pem',
      '-name',
      'mirror-client',
      '-out',
      'client-keystore.p12',
      '-passout',
      'env:MIRROR_TEST_KEYSTORE_PW',
    ],
    passwords
  )
  openssl(dir, ['pkcs12', '-export', '-nokeys', '-in', 'ca.pem', '-out', 'truststore.p12', '-passout', 'env:MIRROR_TEST_TRUSTSTORE_PW'], passwords)
  return {
    dir,
    caPem: join(dir, 'ca.pem'),
    otherCaPem: join(dir, 'other-ca.pem'),
    serverKeystorePem: join(dir, 'server-keystore.pem'),
    clientKeyPem: join(dir, 'client.key'),
    clientCertPem: join(dir, 'client.pem'),
    clientKeystorePem: join(dir, 'client-keystore.pem'),
    clientKeystoreP12: join(dir, 'client-keystore.p12'),
    truststoreP12: join(dir, 'truststore.p12'),
    foreignClientKeystorePem: join(dir, 'foreign-client-keystore.pem'),
  }
}

/** Passwords of the stores `makeJavaStores` writes with keytool; the JKS key has its own password. */
export const JAVA_STORE_PASSWORDS = { keystore: 'jks-keystore-pw-6a1f', key: 'jks-key-pw-e03c', truststore: 'jks-truststore-pw-94b7' } as const

/** Stores written by Java's keytool from `TestCertificates`: what a Java client's configuration points at. */
export interface JavaStores {
  /** The client key and chain as JKS: store password `keystore`, key password `key`. */
  readonly clientKeystoreJks: string
  /** The client key and chain as JKS with one password (`keystore`) for store and key, as keytool makes by default. */
  readonly clientKeystoreJksOnePassword: string
  /** The CA certificate as a JKS truststore, password `truststore`. */
  readonly truststoreJks: string
  /** The CA certificate as a PKCS12 truststore made by keytool, password `truststore`. */
  readonly truststoreP12: string
  /** The CA certificate as a JCEKS truststore, password `truststore`. */
  readonly truststoreJceks: string
}

function keytool (dir: string, args: string[]): void {
  execFileSync('keytool', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Writes JKS, PKCS12 and JCEKS stores with keytool (Java 17) holding the client key and the CA of `certificates`. */
export function makeJavaStores (certificates: TestCertificates): JavaStores {
  const dir = certificates.dir
  const pw = JAVA_STORE_PASSWORDS
  const fromP12 = (out: string, keyPassword: string): void =>
    keytool(dir, [
      '-importkeystore',
      '-noprompt',
      '-srckeystore',
      certificates.clientKeystoreP12,
      '-srcstoretype',
      'PKCS12',
      '-srcstorepass',
      STORE_PASSWORDS.keystore,
      '-srcalias',
      'mirror-client',
      '-destkeystore',
      out,
      '-deststoretype',
      'JKS',
      '-deststorepass',
      pw.keystore,
      '-destkeypass',
      keyPassword,
    ])
  fromP12('client-keystore.jks', pw.key)
  fromP12('client-keystore-one-password.jks', pw.keystore)
  for (const [out, type] of [['truststore.jks', 'JKS'], ['truststore-keytool.p12', 'PKCS12'], ['truststore.jceks', 'JCEKS']] as const) {
    keytool(dir, [
      '-importcert',
      '-noprompt',
      '-alias',
      'mirror-ca',
      '-file',
      certificates.caPem,
      '-keystore',
      out,
      '-storetype',
      type,
      '-storepass',
      pw.truststore,
    ])
  }
  return {
    clientKeystoreJks: join(dir, 'client-keystore.jks'),
    clientKeystoreJksOnePassword: join(dir, 'client-keystore-one-password.jks'),
    truststoreJks: join(dir, 'truststore.jks'),
    truststoreP12: join(dir, 'truststore-keytool.p12'),
    truststoreJceks: join(dir, 'truststore.jceks'),
  }
}

/** SCRAM-SHA-512 users created when the secured cluster is formatted. */
export const SCRAM_USERS = { alice: 'alice-secret-4f1c' } as const

export interface SecuredCluster {
  readonly cluster: LocalCluster
  readonly certificates: TestCertificates
  /** 127.0.0.1:port of the SASL_SSL listener (SCRAM-SHA-512). */
  readonly saslSslBootstrap: string
  /** 127.0.0.1:port of the SSL listener that requires a client certificate. */
  readonly mtlsBootstrap: string
}

/**
 * A single-node cluster with a PLAINTEXT listener (admin, readiness, inter-broker), a SASL_SSL
 * listener with SCRAM-SHA-512 users made at format time and an SSL listener requiring client
 * certificates; ports from `TEST_EXTRA_PORTS` (default 39000). Stopped when the test ends.
 */
export async function startSecuredCluster (
  t: TestContext,
  name = 'secured',
  options: { readonly brokerProperties?: Record<string, string>, readonly users?: Record<string, string> } = {}
): Promise<SecuredCluster> {
  const certificates = makeCertificates()
  const tls = (listener: string): Record<string, string> => ({
    [`listener.name.${listener}.ssl.keystore.type`]: 'PEM',
    [`listener.name.${listener}.ssl.keystore.location`]: certificates.serverKeystorePem,
    [`listener.name.${listener}.ssl.truststore.type`]: 'PEM',
    [`listener.name.${listener}.ssl.truststore.location`]: certificates.caPem,
  })
  const { cluster, port } = await withFreshPortsOnBindError(async from => {
    let port = await freePortPair(from)
    while (await portAnswers(port + 2) || await portAnswers(port + 3)) port = await freePortPair(port + 4)
    const cluster = new LocalCluster({
      name: `${name}-${port}`,
      port,
      heap: '384m',
      extraListeners: [
        { name: 'SASL_SSL', port: port + 2, securityProtocol: 'SASL_SSL' },
        { name: 'MTLS', port: port + 3, securityProtocol: 'SSL' },
      ],
      brokerProperties: {
        'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
        'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        ...tls('sasl_ssl'),
        ...tls('mtls'),
        'listener.name.mtls.ssl.client.auth': 'required',
        ...options.brokerProperties,
      },
      formatArgs: Object.entries({ ...SCRAM_USERS, ...options.users })
        .flatMap(([user, password]) => ['--add-scram', `SCRAM-SHA-512=[name=${user},password=${password}]`]),
    })
    t.after(() => cluster.stop({ graceMs: 2_000 }))
    await cluster.start()
    return { value: { cluster, port }, port }
  })
  return { cluster, certificates, saslSslBootstrap: `127.0.0.1:${port + 2}`, mtlsBootstrap: `127.0.0.1:${port + 3}` }
}

export interface OAuthCluster {
  readonly cluster: LocalCluster
  /** 127.0.0.1:port of the SASL_PLAINTEXT listener that takes OAUTHBEARER tokens. */
  readonly oauthBootstrap: string
}

/**
 * A single-node cluster with a PLAINTEXT listener (admin, inter-broker) and a SASL_PLAINTEXT
 * listener `OAUTH` whose tokens Kafka's own `OAuthBearerValidatorCallbackHandler` validates
 * against `jwksUrl` (RS256 signature, expiry, `expectedAudience`). Sessions end when their token
 * expires (`connections.max.reauth.ms`, or sooner with `brokerProperties` naming a shorter one), so clients must
 * re-authenticate with fresh tokens.
 */
export async function startOAuthCluster (
  t: TestContext,
  jwksUrl: string,
  expectedAudience: string,
  name = 'oauth',
  brokerProperties: Record<string, string> = {}
): Promise<OAuthCluster> {
  const { cluster, port } = await withFreshPortsOnBindError(async from => {
    let port = await freePortPair(from)
    while (await portAnswers(port + 2)) port = await freePortPair(port + 3)
    const cluster = new LocalCluster({
      name: `${name}-${port}`,
      port,
      heap: '384m',
      extraListeners: [{ name: 'OAUTH', port: port + 2, securityProtocol: 'SASL_PLAINTEXT' }],
      brokerProperties: {
        'sasl.enabled.mechanisms': 'OAUTHBEARER',
        'listener.name.oauth.sasl.enabled.mechanisms': 'OAUTHBEARER',
        'listener.name.oauth.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
        'listener.name.oauth.oauthbearer.sasl.server.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
        'listener.name.oauth.oauthbearer.connections.max.reauth.ms': '3600000',
        'sasl.oauthbearer.jwks.endpoint.url': jwksUrl,
        'sasl.oauthbearer.expected.audience': expectedAudience,
        // Named explicitly: Kafka 4.1.1's default (DefaultJwtValidator, made without the key resolver) checks no signature or audience.
        'sasl.oauthbearer.jwt.validator.class': 'org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator',
        ...brokerProperties,
      },
      // Kafka 4 reads JWKS only from URLs listed here (CVE-2025-27817).
      jvmProperties: { 'org.apache.kafka.sasl.oauthbearer.allowed.urls': jwksUrl },
    })
    t.after(() => cluster.stop({ graceMs: 2_000 }))
    await cluster.start()
    return { value: { cluster, port }, port }
  })
  return { cluster, oauthBootstrap: `127.0.0.1:${port + 2}` }
}

export interface KerberosCluster {
  readonly cluster: LocalCluster
  /** 127.0.0.1:port of the SASL_PLAINTEXT listener that takes GSSAPI (Kerberos) only. */
  readonly kerberosBootstrap: string
}

/**
 * A single-node cluster with a PLAINTEXT listener (admin, inter-broker) and a SASL_PLAINTEXT
 * listener `KERBEROS` taking GSSAPI with the service principal `kafka/127.0.0.1@REALM` of `kdc`
 * (made here, its key in a keytab the broker's JAAS reads); the JVM gets the KDC's krb5.conf with
 * `-Djava.security.krb5.conf`, as Kafka's documentation sets it up. `brokerProperties` are added to the broker's.
 */
export async function startKerberosCluster (
  t: TestContext,
  kdc: MitKdc,
  name = 'kerberos',
  brokerProperties: Record<string, string> = {}
): Promise<KerberosCluster> {
  const principal = `kafka/127.0.0.1@${REALM}`
  const keytab = await kdc.principalWithKeytab(principal, 'broker.keytab')
  const { cluster, port } = await withFreshPortsOnBindError(async from => {
    let port = await freePortPair(from)
    while (await portAnswers(port + 2)) port = await freePortPair(port + 3)
    const cluster = new LocalCluster({
      name: `${name}-${port}`,
      port,
      heap: '384m',
      extraListeners: [{ name: 'KERBEROS', port: port + 2, securityProtocol: 'SASL_PLAINTEXT' }],
      brokerProperties: {
        'sasl.enabled.mechanisms': 'GSSAPI',
        'listener.name.kerberos.sasl.enabled.mechanisms': 'GSSAPI',
        'sasl.kerberos.service.name': 'kafka',
        'listener.name.kerberos.gssapi.sasl.jaas.config': `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="${keytab}" principal="${principal}";`,
        ...brokerProperties,
      },
      jvmProperties: { 'java.security.krb5.conf': kdc.krb5Conf },
    })
    t.after(() => cluster.stop({ graceMs: 2_000 }))
    await cluster.start()
    return { value: { cluster, port }, port }
  })
  return { cluster, kerberosBootstrap: `127.0.0.1:${port + 2}` }
}
