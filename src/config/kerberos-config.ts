import { readFileSync } from 'node:fs'
import type { GssapiSettings } from './cluster-connection.js'
import type { JaasEntry } from './jaas.js'
import type { Properties } from './java-properties.js'
import { kerberosInstallHint, kerberosPackageUnusable } from './kerberos-package.js'
import { KeytabFormatError, keytabEntries } from './keytab-file.js'
import { parseBoolean, type ProblemList } from './values.js'

export const KRB5_LOGIN_MODULE = 'com.sun.security.auth.module.Krb5LoginModule'

/**
 * Options of Java's `Krb5LoginModule` that a client configuration may hold and that change nothing
 * here: `storeKey` (keeps the key in the Java Subject), `doNotPrompt` (nothing prompts here),
 * `renewTGT` and `refreshKrb5Config` (tickets from a keytab are renewed by the Kerberos library
 * when they near expiry, and krb5.conf is read at each login), `debug`.
 */
const ACCEPTED_OPTIONS = ['storeKey', 'doNotPrompt', 'renewTGT', 'refreshKrb5Config', 'debug'] as const
/** The options read. */
const READ_OPTIONS = ['useKeyTab', 'keyTab', 'principal', 'useTicketCache', 'ticketCache', 'isInitiator', 'serviceName'] as const
/** Options that take a password from another login module or a prompt: a mirror has neither. */
const PASSWORD_OPTIONS = ['tryFirstPass', 'useFirstPass', 'storePass', 'clearPass'] as const

const EXAMPLE = `${KRB5_LOGIN_MODULE} required useKeyTab=true storeKey=true keyTab="/etc/security/keytabs/mirror.keytab" principal="mirror@EXAMPLE.COM";`

/** True when `principal` (with or without `@REALM`) names `entry`'s principal; without a realm, any realm matches (Java adds the default one). */
function samePrincipal (principal: string, entryPrincipal: string): boolean {
  return principal.includes('@') ? principal === entryPrincipal : entryPrincipal.slice(0, entryPrincipal.lastIndexOf('@')) === principal
}

/**
 * Checks the keytab before anything connects: the file is there and readable, is a keytab, and
 * holds a key of `principal`. Messages name the file and the principals it holds, never a key.
 */
function checkKeytab (jaasKey: string, path: string, principal: string | undefined, problems: ProblemList): void {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'cannot be read by this user'
          : code === 'EISDIR'
            ? 'is a folder'
            : `cannot be read (${code ?? (error as Error).message})`
    problems.add(
      jaasKey,
      undefined,
      `option keyTab "${path}" ${why}; give the path of the client's keytab file (kadmin ktadd -k FILE ${principal ?? 'PRINCIPAL'})`
    )
    return
  }
  let principals: string[]
  try {
    principals = [...new Set(keytabEntries(bytes).map(entry => entry.principal))]
  } catch (error) {
    if (!(error instanceof KeytabFormatError)) throw error
    problems.add(
      jaasKey,
      undefined,
      `option keyTab "${path}" is not a Kerberos keytab (the file ${error.message}); give the keytab exported for the client principal`
    )
    return
  }
  if (principal === undefined || principals.some(entry => samePrincipal(principal, entry))) return
  const held =
    principals.length === 0 ? 'holds no key at all' : `holds keys of ${principals.slice(0, 5).join(', ')}${principals.length > 5 ? ', ...' : ''} only`
  problems.add(
    jaasKey,
    undefined,
    `the keytab "${path}" has no key of principal "${principal}" (it ${held}); set principal to one of them, or export the principal's key into the keytab (kadmin ktadd -k ${path} ${principal})`
  )
}

/** Refuses the JAAS options that take a password (a mirror has no prompt) and those Krb5LoginModule does not know. */
function checkOptions (entry: JaasEntry, jaasKey: string, problems: ProblemList): void {
  for (const name of entry.options.keys()) {
    if ((PASSWORD_OPTIONS as readonly string[]).includes(name)) {
      problems.add(
        jaasKey,
        undefined,
        `has the option ${name}, which takes a password from a prompt or another login module; a mirror has neither: use useKeyTab=true with keyTab and principal`
      )
    } else if (!(ACCEPTED_OPTIONS as readonly string[]).includes(name) && !(READ_OPTIONS as readonly string[]).includes(name)) {
      problems.add(
        jaasKey,
        undefined,
        `has the option ${name}, which Krb5LoginModule does not know; use useKeyTab, keyTab, principal, useTicketCache, ticketCache (and storeKey, doNotPrompt)`
      )
    }
  }
}

/** `sasl.kerberos.service.name`, else the JAAS option `serviceName` (as Kafka takes it): the primary of the brokers' principals. */
function serviceNameOf (properties: Properties, entry: JaasEntry, serviceKey: string, problems: ProblemList): string | undefined {
  const fromKey = properties.get('sasl.kerberos.service.name')?.value
  // Kafka takes the JAAS option serviceName when the key is not set.
  const serviceRaw = fromKey !== undefined && fromKey.trim() !== '' ? fromKey : entry.options.get('serviceName') ?? fromKey
  const serviceName = serviceRaw?.trim()
  if (serviceName === undefined || serviceName === '') {
    problems.add(
      serviceKey,
      serviceRaw,
      "missing for GSSAPI; set it to the primary of the brokers' Kerberos principals (kafka for kafka/broker1.example.com@EXAMPLE.COM)"
    )
  } else if (/[/@\s]/.test(serviceName)) {
    problems.add(
      serviceKey,
      serviceRaw,
      "is the primary of the brokers' principals only (kafka, not kafka/host@REALM); the broker's host name and realm are added per connection"
    )
  }
  return serviceName
}

/** The credentials the options name: a keytab (checked for the principal), or a ticket cache that must exist; else Java would prompt. */
function checkCredentials (
  options: { useKeyTab: boolean | undefined, useTicketCache: boolean | undefined, keyTab?: string, principal?: string, ticketCache?: string },
  jaasKey: string,
  problems: ProblemList
): void {
  const { useKeyTab, useTicketCache, keyTab, principal, ticketCache } = options
  if (useKeyTab) {
    if (keyTab === undefined) problems.add(jaasKey, undefined, `has useKeyTab=true but no keyTab option; write ${EXAMPLE}`)
    if (principal === undefined) {
      problems.add(jaasKey, undefined, `has useKeyTab=true but no principal option: which key of the keytab to use; write ${EXAMPLE}`)
    }
    if (keyTab !== undefined && principal !== undefined) checkKeytab(jaasKey, keyTab, principal, problems)
  } else if (useKeyTab === undefined || useTicketCache === undefined) {
    // An option that is neither true nor false was reported: which credentials were meant is unknown.
  } else if (!useTicketCache) {
    problems.add(
      jaasKey,
      undefined,
      `has neither useKeyTab=true nor useTicketCache=true, so Java would prompt for a password, which a mirror cannot; write ${EXAMPLE}`
    )
  } else if (ticketCache !== undefined && !/^[A-Z]+:/.test(ticketCache)) {
    try {
      readFileSync(ticketCache)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      problems.add(
        jaasKey,
        undefined,
        `option ticketCache "${ticketCache}" ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})`}; run kinit -c ${ticketCache} ${principal ?? 'PRINCIPAL'} first, or use useKeyTab=true with keyTab and principal`
      )
    }
  }
}

/**
 * The GSSAPI (Kerberos) settings of a Java client configuration: `sasl.kerberos.service.name`
 * (or the JAAS option `serviceName`) and `sasl.jaas.config` with Java's `Krb5LoginModule` and
 * either `useKeyTab=true keyTab="..." principal="..."` (the keytab is checked for the principal
 * here, before anything connects) or `useTicketCache=true` (optionally `ticketCache="..."` and
 * `principal`). With both, the keytab is used. Options that need a password prompt are problems.
 */
export function kerberosFromProperties (properties: Properties, entry: JaasEntry, where: string, problems: ProblemList): GssapiSettings | undefined {
  const jaasKey = `${where}sasl.jaas.config`
  const before = problems.problems.length
  if (entry.loginModule !== KRB5_LOGIN_MODULE) {
    problems.add(jaasKey, undefined, `uses ${entry.loginModule}, which does not fit sasl.mechanism=GSSAPI; use ${EXAMPLE}`)
    return undefined
  }
  if (entry.controlFlag !== 'required') problems.add(jaasKey, undefined, `control flag "${entry.controlFlag}": write "required" after the login module`)
  checkOptions(entry, jaasKey, problems)
  /** The option as a boolean (default false); undefined when it is neither true nor false (a problem then). */
  const flag = (name: string): boolean | undefined => {
    const raw = entry.options.get(name)
    return raw === undefined ? false : parseBoolean(`${jaasKey} option ${name}`, raw, problems)
  }
  const text = (name: string): string | undefined => {
    const value = entry.options.get(name)?.trim()
    if (value === '') problems.add(jaasKey, undefined, `option ${name} is empty; give a value or remove it`)
    return value === '' ? undefined : value
  }
  const useKeyTab = flag('useKeyTab')
  const useTicketCache = flag('useTicketCache')
  const keyTab = text('keyTab')
  const principal = text('principal')
  const ticketCache = text('ticketCache')
  if (entry.options.has('isInitiator') && flag('isInitiator') === false) {
    problems.add(jaasKey, undefined, 'option isInitiator is false, which is for servers; a client initiates: remove it')
  }

  const serviceName = serviceNameOf(properties, entry, `${where}sasl.kerberos.service.name`, problems)
  checkCredentials({ useKeyTab, useTicketCache, keyTab, principal, ticketCache }, jaasKey, problems)
  const unusable = kerberosPackageUnusable()
  if (unusable !== undefined) problems.add(jaasKey, undefined, kerberosInstallHint(unusable))
  if (problems.problems.length > before || serviceName === undefined) return undefined
  return {
    mechanism: 'gssapi',
    serviceName,
    ...(principal === undefined ? {} : { principal }),
    credentials: useKeyTab ? 'keytab' : 'ticket-cache',
    ...(useKeyTab && keyTab !== undefined ? { keyTab } : {}),
    ...(!useKeyTab && ticketCache !== undefined ? { ticketCache } : {}),
    jaasKey,
  }
}
