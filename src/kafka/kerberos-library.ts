import type { GssapiSettings } from '../config/cluster-connection.js'
import { KERBEROS_PACKAGE, kerberosInstallHint, kerberosLoadFailure } from '../config/kerberos-package.js'
import { ErrorCodes, MirrorError } from '../shared/errors.js'
import { type NativeLoader, requireNative } from './native-loader.js'

/** One GSS-API security context of the `kerberos` package (`KerberosClient`); tokens are base64 strings. */
export interface GssClientContext {
  /** `gss_init_sec_context` with the broker's last token (empty at first); the token to send, or null/empty when there is none. */
  step (challenge: string): Promise<string | null>
  /** `gss_unwrap` of a broker message. */
  unwrap (challenge: string): Promise<string>
  /**
   * `gss_wrap` of the RFC 4752 answer to a security-layer offer: the package writes "no security
   * layer" and the offer's buffer size over the first 4 bytes of `challenge`, then `user` (the
   * authorization id).
   */
  wrap (challenge: string, options: { user?: string }): Promise<string>
  readonly contextComplete: boolean
  /** The authenticated client principal, once the context is complete. */
  readonly username: string
}

/** What the GSSAPI mechanism uses of the `kerberos` package (mongodb-js/kerberos). */
export interface KerberosLibrary {
  initializeClient (service: string, options: { principal?: string, mechOID?: number }): Promise<GssClientContext>
  readonly GSS_MECH_OID_KRB5: number
}

/**
 * The `kerberos` package, or a `MIRROR_CONFIG` error of one line naming the JAAS key and how to
 * install it: it is an optional dependency, built from source where no prebuilt binary can be
 * downloaded, so an installation without a compiler and the Kerberos headers lacks it. The
 * configuration check refuses GSSAPI without it first (config/kerberos-package.ts); this is the
 * same line for settings made in code (the embedding API).
 */
export function loadKerberosLibrary (settings: Pick<GssapiSettings, 'jaasKey'>, loader: NativeLoader = requireNative): KerberosLibrary {
  try {
    const library = loader(KERBEROS_PACKAGE) as Partial<KerberosLibrary>
    if (typeof library.initializeClient !== 'function') throw new Error('it has no initializeClient')
    return library as KerberosLibrary
  } catch (error) {
    throw new MirrorError(ErrorCodes.CONFIG, `${settings.jaasKey}: ${kerberosInstallHint(kerberosLoadFailure(error))}`, { cause: error })
  }
}

/** The environment the system's Kerberos library reads while a context takes its credentials. */
interface CredentialEnvironment {
  readonly KRB5_CLIENT_KTNAME?: string
  readonly KRB5CCNAME?: string
}

let contextsMade = 0
/** Every context is made under this chain: the environment it reads is the process's. */
let environmentTurn: Promise<unknown> = Promise.resolve()

/**
 * Makes GSS-API client contexts for one GSSAPI connection, with the credentials its JAAS options
 * name. The `kerberos` package takes no keytab or cache per context: the Kerberos library reads
 * `KRB5_CLIENT_KTNAME` (the client keytab it gets tickets from) and `KRB5CCNAME` (the ticket
 * cache) when a context acquires its credentials, and keeps what it resolved in the context. So
 * each context is made with those two set for this connection, one context at a time in the
 * process, and the environment is put back after. With a keytab the tickets live in a memory
 * cache of this connection (reused by its next contexts, renewed from the keytab by the library
 * when they expire); the user's ticket cache is neither read nor written.
 */
export class GssapiCredentials {
  readonly #settings: GssapiSettings
  readonly #library: KerberosLibrary
  readonly #environment: CredentialEnvironment

  constructor (settings: GssapiSettings, library: KerberosLibrary) {
    this.#settings = settings
    this.#library = library
    contextsMade++
    this.#environment = settings.credentials === 'keytab'
      ? { KRB5_CLIENT_KTNAME: `FILE:${settings.keyTab ?? ''}`, KRB5CCNAME: `MEMORY:kafka-mirror-sidecar-${process.pid}-${contextsMade}` }
      : settings.ticketCache === undefined ? {} : { KRB5CCNAME: /^[A-Z]+:/.test(settings.ticketCache) ? settings.ticketCache : `FILE:${settings.ticketCache}` }
  }

  /**
   * A new context for the service `<serviceName>@<host>` (GSS_C_NT_HOSTBASED_SERVICE:
   * `kafka/host@REALM`) and its first token (the Kerberos AP-REQ, base64). The first step runs
   * under the environment too: without a principal the library resolves the default credentials
   * there, not when the context is made.
   */
  async start (host: string): Promise<{ context: GssClientContext, token: string }> {
    const make = async (): Promise<{ context: GssClientContext, token: string }> => {
      const saved = Object.fromEntries(Object.keys(this.#environment).map(name => [name, process.env[name]]))
      Object.assign(process.env, this.#environment)
      try {
        const context = await this.#library.initializeClient(`${this.#settings.serviceName}@${host}`, {
          ...(this.#settings.principal === undefined ? {} : { principal: this.#settings.principal }),
          mechOID: this.#library.GSS_MECH_OID_KRB5,
        })
        return { context, token: await context.step('') ?? '' }
      } finally {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name]
          else process.env[name] = value
        }
      }
    }
    const turn = environmentTurn.then(make)
    // The next context waits for this one whatever its outcome; the outcome goes to this caller.
    environmentTurn = turn.catch(() => undefined)
    return await turn
  }
}
