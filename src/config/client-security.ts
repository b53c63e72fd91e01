import { createSecureContext, type ConnectionOptions } from 'node:tls'
import { AWS_MSK_IAM_LOGIN_MODULE, awsMskIamFromProperties } from './aws-msk-iam-config.js'
import {
  saslCredentials,
  tlsOptions,
  type AwsMskIamSettings,
  type GssapiSettings,
  type OAuthBearerCredentials,
  type SaslCredentials,
  type SaslMechanism,
} from './cluster-connection.js'
import type { Properties } from './java-properties.js'
import { parseJaasConfig } from './jaas.js'
import { KERBEROS_KEYS, KRB5_LOGIN_MODULE, kerberosFromProperties } from './kerberos-config.js'
import { clientCertificate, trustedCertificates } from './key-stores.js'
import { OAUTH_KEYS, OAUTH_LOGIN_MODULE, oauthBearerFromProperties } from './oauth-bearer-config.js'
import type { ProblemList } from './values.js'

/** True for keys `securityFromProperties` reads (applies, refuses or reports as ignored). */
export function isSecurityKey (key: string): boolean {
  return key === 'security.protocol' || key.startsWith('ssl.') || key.startsWith('sasl.')
}

export interface ClientSecurity {
  readonly tls?: ConnectionOptions
  readonly sasl?: SaslCredentials | OAuthBearerCredentials | AwsMskIamSettings | GssapiSettings
}

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const
const MECHANISMS: Record<string, { mechanism: SaslMechanism, module: string }> = {
  PLAIN: { mechanism: 'plain', module: 'org.apache.kafka.common.security.plain.PlainLoginModule' },
  'SCRAM-SHA-256': { mechanism: 'scram-sha-256', module: 'org.apache.kafka.common.security.scram.ScramLoginModule' },
  'SCRAM-SHA-512': { mechanism: 'scram-sha-512', module: 'org.apache.kafka.common.security.scram.ScramLoginModule' },
}
/** Keys that would load Java code or change how authentication works: refused rather than ignored. */
const JAVA_CLASS_KEYS = ['sasl.client.callback.handler.class', 'sasl.login.callback.handler.class', 'sasl.login.class', 'ssl.engine.factory.class']
/** Keys read when TLS is on; any other `ssl.*` key is reported as ignored. */
const APPLIED_SSL_KEYS = new Set(['ssl.truststore.location', 'ssl.truststore.type', 'ssl.truststore.password', 'ssl.truststore.certificates',
  'ssl.keystore.location', 'ssl.keystore.type', 'ssl.keystore.password', 'ssl.keystore.key', 'ssl.keystore.certificate.chain', 'ssl.key.password',
  'ssl.endpoint.identification.algorithm', 'ssl.enabled.protocols', 'ssl.protocol'])
const APPLIED_SASL_KEYS = new Set(['sasl.mechanism', 'sasl.jaas.config'])

function tlsProtocols (
  get: (name: string) => string | undefined,
  key: (name: string) => string,
  problems: ProblemList
): Pick<ConnectionOptions, 'minVersion' | 'maxVersion'> {
  const raw = get('ssl.enabled.protocols')
  if (raw === undefined) return {}
  const known = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const
  const wanted = raw
    .split(',')
    .map(s => s.trim())
    .filter(s => s !== '')
  const bad = wanted.filter(p => !(known as readonly string[]).includes(p))
  if (bad.length > 0 || wanted.length === 0) {
    problems.add(key('ssl.enabled.protocols'), raw, `expected a list of ${known.join(', ')}`)
    return {}
  }
  const indexes = wanted.map(p => (known as readonly string[]).indexOf(p))
  return { minVersion: known[Math.min(...indexes)], maxVersion: known[Math.max(...indexes)] }
}

/**
 * Maps Java client security keys onto TLS and SASL options: `security.protocol`, `sasl.mechanism`
 * with `sasl.jaas.config` (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with `sasl.oauthbearer.*`, AWS_MSK_IAM,
 * GSSAPI with `sasl.kerberos.service.name`; GSSAPI is also Java's default mechanism), `ssl.truststore.*` (JKS read in memory,
 * PKCS12 read with node-forge, PEM, inline certificates), `ssl.keystore.*`/`ssl.key.password` (JKS
 * converted to PEM in memory, PKCS12, PEM) and `ssl.endpoint.identification.algorithm`. Store
 * types default to JKS as in Java; the file's content decides when it disagrees. Keys that would
 * change behaviour and cannot be honoured (JCEKS stores, Java classes) are
 * problems; other unused `ssl.*`/`sasl.*`
 * keys are reported as ignored. `where` names the keys in messages (a file path or an mm2 prefix).
 */
export function securityFromProperties (properties: Properties, where: string, problems: ProblemList): ClientSecurity {
  const get = (name: string): string | undefined => properties.get(name)?.value
  const key = (name: string): string => `${where}${name}`
  const rawProtocol = get('security.protocol') ?? 'PLAINTEXT'
  const protocol = PROTOCOLS.find(p => p === rawProtocol.trim().toUpperCase())
  if (protocol === undefined) {
    problems.add(key('security.protocol'), rawProtocol, `expected one of ${PROTOCOLS.join(', ')}`)
    return {}
  }
  const usesSasl = protocol.startsWith('SASL_')
  const usesTls = protocol.endsWith('SSL')
  const usesOAuth = usesSasl && get('sasl.mechanism')?.trim().toUpperCase() === 'OAUTHBEARER'
  const usesAwsIam = usesSasl && get('sasl.mechanism')?.trim().toUpperCase() === 'AWS_MSK_IAM'
  // GSSAPI is Java's default sasl.mechanism.
  const usesGssapi = usesSasl && (get('sasl.mechanism') ?? 'GSSAPI').trim().toUpperCase() === 'GSSAPI'
  // With OAUTHBEARER the login callback handler names the client credentials grant, with AWS_MSK_IAM the client
  // callback handler names aws-msk-iam-auth's: oauthBearerFromProperties and awsMskIamFromProperties check them.
  const classKeys = usesOAuth
    ? JAVA_CLASS_KEYS.filter(name => name !== 'sasl.login.callback.handler.class')
    : usesAwsIam ? JAVA_CLASS_KEYS.filter(name => name !== 'sasl.client.callback.handler.class') : JAVA_CLASS_KEYS
  for (const name of classKeys) {
    const value = get(name)
    if (value !== undefined) {
      problems.add(
        key(name),
        value,
        'Java classes cannot be loaded here; remove the key (supported: PLAIN, SCRAM, OAUTHBEARER, AWS_MSK_IAM and GSSAPI with sasl.jaas.config, JKS/PKCS12/PEM stores)'
      )
    }
  }
  const appliedSasl = (name: string): boolean => APPLIED_SASL_KEYS.has(name) || (usesOAuth && (OAUTH_KEYS as readonly string[]).includes(name)) ||
    (usesAwsIam && name === 'sasl.client.callback.handler.class') || (usesGssapi && (KERBEROS_KEYS as readonly string[]).includes(name))
  for (const name of properties.keys()) {
    if (name.startsWith('sasl.') && !classKeys.includes(name) && !(usesSasl && appliedSasl(name))) {
      if (!usesSasl && APPLIED_SASL_KEYS.has(name)) {
        problems.add(
          key(name),
          get(name),
          `is set but security.protocol is ${protocol}, so it would have no effect; set security.protocol=SASL_SSL (or SASL_PLAINTEXT) or remove it`
        )
      } else problems.ignore(key(name))
    }
    if (name.startsWith('ssl.') && !JAVA_CLASS_KEYS.includes(name) && !(usesTls && APPLIED_SSL_KEYS.has(name))) problems.ignore(key(name))
  }

  let sasl: SaslCredentials | OAuthBearerCredentials | AwsMskIamSettings | GssapiSettings | undefined
  if (usesGssapi) {
    const jaas = get('sasl.jaas.config')
    if (jaas === undefined) {
      const why =
        get('sasl.mechanism') === undefined
          ? "missing while sasl.mechanism is not set either, so Java's default GSSAPI (Kerberos) applies; set sasl.mechanism to the broker's mechanism (PLAIN, SCRAM-SHA-512, ...) with its login module, or for Kerberos set it"
          : 'missing for GSSAPI; set it'
      problems.add(
        key('sasl.jaas.config'),
        undefined,
        `${why} to ${KRB5_LOGIN_MODULE} required useKeyTab=true storeKey=true keyTab="/path/to/client.keytab" principal="user@REALM";`
      )
    } else {
      const entry = parseJaasConfig(key('sasl.jaas.config'), jaas, problems)
      if (entry !== undefined && get('sasl.mechanism') === undefined && entry.loginModule !== KRB5_LOGIN_MODULE) {
        problems.add(
          key('sasl.mechanism'),
          undefined,
          `missing, so Java's default GSSAPI (Kerberos) applies, which does not fit ${entry.loginModule} in sasl.jaas.config; set sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI)`
        )
      } else if (entry !== undefined) {
        sasl = kerberosFromProperties(properties, entry, where, problems)
      }
    }
  } else if (usesAwsIam) {
    const jaas = get('sasl.jaas.config')
    if (jaas === undefined) {
      problems.add(
        key('sasl.jaas.config'),
        undefined,
        `missing for AWS_MSK_IAM; set it to ${AWS_MSK_IAM_LOGIN_MODULE} required; (optionally with awsProfileName="..." or awsRoleArn="...")`
      )
    } else {
      const entry = parseJaasConfig(key('sasl.jaas.config'), jaas, problems)
      if (entry !== undefined) sasl = awsMskIamFromProperties(properties, entry, where, problems)
    }
  } else if (usesOAuth) {
    const jaas = get('sasl.jaas.config')
    if (jaas === undefined) {
      problems.add(
        key('sasl.jaas.config'),
        undefined,
        `missing for OAUTHBEARER; set it to ${OAUTH_LOGIN_MODULE} required clientId="..." clientSecret="..." scope="...";`
      )
    } else {
      const entry = parseJaasConfig(key('sasl.jaas.config'), jaas, problems)
      if (entry !== undefined) sasl = oauthBearerFromProperties(properties, entry, where, problems)
    }
  } else if (usesSasl) {
    const rawMechanism = get('sasl.mechanism')
    const mechanismName = (rawMechanism ?? '').trim().toUpperCase()
    const mechanism = MECHANISMS[mechanismName]
    const jaas = get('sasl.jaas.config')
    if (mechanism === undefined) {
      problems.add(
        key('sasl.mechanism'),
        rawMechanism,
        'is not a SASL mechanism the sidecar speaks; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM or GSSAPI with sasl.jaas.config'
      )
    } else if (jaas === undefined) {
      problems.add(key('sasl.jaas.config'), undefined, `missing for ${mechanismName}; set it to ${mechanism.module} required username="..." password="...";`)
    } else {
      const entry = parseJaasConfig(key('sasl.jaas.config'), jaas, problems)
      if (entry !== undefined) {
        const username = entry.options.get('username')
        const password = entry.options.get('password')
        if (entry.loginModule !== mechanism.module) {
          problems.add(
            key('sasl.jaas.config'),
            undefined,
            `uses ${entry.loginModule}, which does not fit sasl.mechanism=${mechanismName}; use ${mechanism.module}`
          )
        } else if (entry.controlFlag !== 'required') {
          problems.add(key('sasl.jaas.config'), undefined, `control flag "${entry.controlFlag}": write "required" after the login module`)
        } else if (username === undefined || password === undefined) {
          problems.add(
            key('sasl.jaas.config'),
            undefined,
            `has no ${username === undefined ? 'username' : 'password'} option; write ${mechanism.module} required username="..." password="...";`
          )
        } else {
          sasl = saslCredentials(mechanism.mechanism, username, password)
        }
      }
    }
  }

  let tls: ConnectionOptions | undefined
  if (usesTls) {
    const before = problems.problems.length
    const ca = trustedCertificates(properties, get, key, problems)
    const client = clientCertificate(properties, get, key, problems)
    const algorithm = get('ssl.endpoint.identification.algorithm')
    const checkHost = algorithm === undefined || algorithm.trim().toLowerCase() === 'https'
    if (!checkHost && algorithm?.trim() !== '') {
      problems.add(key('ssl.endpoint.identification.algorithm'), algorithm, 'expected https (check the broker host name) or empty (do not)')
    }
    const options: ConnectionOptions = {
      rejectUnauthorized: true,
      ...(ca === undefined ? {} : { ca }),
      ...client,
      ...tlsProtocols(get, key, problems),
      // ssl.endpoint.identification.algorithm= (empty): the certificate is still verified, the host name is not.
      ...(checkHost ? {} : { checkServerIdentity: () => undefined }),
    }
    if (problems.problems.length === before) {
      try {
        createSecureContext(options)
      } catch (error) {
        const reason = (error as Error).message.replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/i, '')
        if (client.pfx !== undefined && /mac verify failure/i.test(reason)) {
          // Node reports a wrong PKCS12 password as an integrity (MAC) failure of the store.
          const password = properties.get('ssl.keystore.password') ?? properties.get('ssl.key.password')
          if (password === undefined) {
            problems.add(
              key('ssl.keystore.password'),
              undefined,
              `missing; the PKCS12 keystore ${get('ssl.keystore.location')} is protected by a password: set ssl.keystore.password to it`
            )
          } else {
            problems.add(
              key(properties.has('ssl.keystore.password') ? 'ssl.keystore.password' : 'ssl.key.password'),
              password.reference,
              `does not open the PKCS12 keystore ${get('ssl.keystore.location')} (wrong password); give the password the store was exported with`
            )
          }
        } else if (client.pfx !== undefined && /unsupported/i.test(reason)) {
          // OpenSSL 3 refuses PKCS12 stores encrypted with RC2/3DES (OpenSSL 1.x and older keytool) even with the right password.
          const location = get('ssl.keystore.location') as string
          problems.add(
            key('ssl.keystore.location'),
            location,
            `is a PKCS12 store with legacy encryption (RC2/3DES), which Node cannot read; re-export it: openssl pkcs12 -legacy -in ${location} -nodes | openssl pkcs12 -export -out ${location.replace(/\.(p12|pfx)$/i, '')}-aes.p12, then point ssl.keystore.location at the new file`
          )
        } else {
          const which =
            client.pfx !== undefined
              ? 'ssl.keystore.location'
              : client.key !== undefined
                ? get('ssl.keystore.location') === undefined
                  ? 'ssl.keystore.key'
                  : 'ssl.keystore.location'
                : 'ssl.truststore.location'
          problems.add(
            key(which),
            get(which) ?? '(inline PEM)',
            `cannot be used for TLS (${reason}); check the file and ssl.keystore.password / ssl.key.password`
          )
        }
      }
    }
    tls = tlsOptions(options)
  }
  return { ...(tls === undefined ? {} : { tls }), ...(sasl === undefined ? {} : { sasl }) }
}
