import { connect as netConnect, isIP, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { connect as tlsConnect, type ConnectionOptions as TlsConnectionOptions } from 'node:tls'
import { TLS_SECRET_FIELDS } from '../../config/cluster-connection.js'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { packageVersion } from '../../shared/package-version.js'
import { knownVersions, negotiateVersions, UNSUPPORTED_VERSION, type WireApi } from './api-versions.js'
import { FrameReader } from './frame-reader.js'
import { decodeMessage, encodeMessage } from './message-codec.js'
import { inVersions, type MessageSchema } from './message-schema.js'
import { reauthenticationDelayMs, type SaslMechanism } from './sasl-mechanism.js'
import { REQUEST_HEADER_SCHEMA, RESPONSE_HEADER_SCHEMA, WIRE_API_SCHEMAS } from './schemas/wire-api-schemas.js'
import { WireReader } from './wire-reader.js'
import { WireWriter } from './wire-writer.js'

type Schemas = typeof WIRE_API_SCHEMAS
type ValueOf<S> = S extends MessageSchema<infer T> ? T : never
/** The request value of `A` (its generated interface). */
export type RequestOf<A extends WireApi> = ValueOf<Schemas[A]['request']>
/** The response value of `A` (its generated interface). */
export type ResponseOf<A extends WireApi> = ValueOf<Schemas[A]['response']>

export interface BrokerConnectionOptions {
  readonly host: string
  readonly port: number
  /** The request header's client id (Kafka's `client.id`); null sends none. */
  readonly clientId: string | null
  /**
   * Options for node:tls (`ca`, `cert`, `key`, `rejectUnauthorized`, ...); absent: plain TCP. Secrets hidden by
   * `tlsOptions()` (non-enumerable `key`, `passphrase`, `pfx`) are passed on to node:tls too.
   */
  readonly tls?: TlsConnectionOptions
  /**
   * SASL: authenticate with this mechanism after ApiVersions, before any other request (KIP-152), and again before
   * the session the broker granted ends (KIP-368); absent: none.
   */
  readonly sasl?: SaslMechanism
  /** Time to open the connection (and finish the TLS handshake), in milliseconds. Default 10,000. */
  readonly connectTimeoutMs?: number
  /** Time a request may wait for its response before the connection is closed, in milliseconds (Kafka's `request.timeout.ms`). Default 30,000. */
  readonly requestTimeoutMs?: number
  /** The largest response frame accepted, in bytes; a larger size prefix closes the connection. Default 512 MiB. */
  readonly maxResponseBytes?: number
}

export interface SendOptions {
  /** The version to send instead of the negotiated one (it must be one our codecs know). */
  readonly version?: number
}

/** A response with the size of the frame it was read from (see `BrokerConnection.sendMeasured`). */
export interface MeasuredResponse<R> {
  readonly response: R
  /** The response frame's size in bytes (the size prefix not counted). */
  readonly frameBytes: number
  /**
   * The bytes a view of the frame keeps alive: the whole buffer under the frame, which is the received chunk when
   * the frame lay inside one chunk (`FrameReader`), so at least `frameBytes`.
   */
  readonly retainedBytes: number
  /** The request's size in bytes as written, its size prefix and header included. */
  readonly requestBytes: number
}

interface InFlight {
  readonly api: WireApi
  readonly version: number
  /** Written while a re-authentication ran (invariant B: only SASL requests are). */
  readonly duringReauthentication: boolean
  readonly requestBytes: number
  readonly resolve: (response: MeasuredResponse<unknown>) => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout
}

/** A request `send` took while the connection re-authenticates: written, in call order, once that is done (KIP-368). */
interface Held {
  readonly write: (remainingMs: number) => void
  readonly reject: (error: Error) => void
  readonly heldAtMs: number
  readonly timer: NodeJS.Timeout
}

/** The name of the cause of a request's error when its broker did not answer it in time (the broker may be hung, not gone). */
export const REQUEST_TIMEOUT_ERROR = 'WireRequestTimeoutError'

/** KIP-511: the client's software name and version, as ApiVersions v3+ sends them (they must match `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`). */
const SOFTWARE_NAME = 'kafka-mirror-sidecar'
const API_VERSIONS_KEY = WIRE_API_SCHEMAS.ApiVersions.request.apiKey!
const SASL_APIS: ReadonlySet<WireApi> = new Set(['SaslHandshake', 'SaslAuthenticate'])

/**
 * One TCP (or TLS) connection to one broker. `start()` connects and negotiates the version of each API
 * with ApiVersions (KIP-35), then authenticates with SASL when `sasl` is given; `send()` then writes a request
 * and resolves with its decoded response. Requests are pipelined: any number may be in flight, written in the
 * order `send` was called.
 *
 * Re-authentication (KIP-368): when SaslAuthenticate grants a session of limited lifetime, the connection
 * authenticates again over the same socket at 85-95 % of it (as Kafka's `SaslClientAuthenticator`), on a timer
 * and at the latest when a request is sent after that time. The requests in flight stay in flight: the
 * SaslHandshake is written behind them and the broker answers them first. Requests sent while it runs are held
 * and written after it, in call order.
 *
 * Invariants (`checkInvariants` asserts them):
 * - A: Kafka answers the requests of a connection in the order it received them, so the correlation ids in
 *   flight are consecutive in write order and each response's correlation id must be the oldest one in flight;
 *   any other closes the connection (the stream is out of step).
 * - B (KIP-368): while a re-authentication runs, only SaslHandshake and SaslAuthenticate are written. The broker
 *   takes no other request from the moment it read the SaslHandshake until the session is renewed: any other
 *   closes the connection (Kafka's `SaslServerAuthenticator`: "Unexpected Kafka request ... during SASL
 *   authentication"). Requests wait in the held list meanwhile.
 * - C: requests are held only while a re-authentication runs; when it ends they are written (or failed with it).
 * - D: a failed or stopped connection has nothing in flight, nothing held and no re-authentication timer.
 *
 * A request timing out closes the connection, as Kafka's own client does: what the broker did with the
 * requests in flight is unknown, and every one of them fails with a retriable MirrorError (a held request's
 * time counts from `send`). A failed re-authentication closes the connection too, with its AUTHENTICATION
 * error. Response bytes and records are views of the response frame (see `FrameReader`). Writes are not held
 * back while the socket's buffer is full: callers bound what they keep in flight. `stop()` is once-only and
 * fails the requests still in flight; callers drain before they stop. A stopped connection does not start again.
 */
export class BrokerConnection {
  readonly #options: BrokerConnectionOptions
  readonly #inFlight = new Map<number, InFlight>()
  readonly #held: Held[] = []
  #socket: Socket | undefined
  #nextCorrelationId = 0
  #versions = new Map<WireApi, number>()
  #failure: MirrorError | undefined
  #sessionLifetimeMs = 0n
  /** When (performance.now()) the session is to be renewed; undefined when it has no end or a renewal runs. */
  #reauthenticateAtMs: number | undefined
  #reauthenticationTimer: NodeJS.Timeout | undefined
  /** The re-authentication that runs; undefined between them. */
  #reauthenticating: Promise<void> | undefined
  #reauthentications = 0
  #stopping: Promise<void> | undefined

  constructor (options: BrokerConnectionOptions) {
    this.#options = options
  }

  get #where (): string {
    return `${this.#options.host}:${this.#options.port}`
  }

  /** Connects, then negotiates API versions. Rejects with a retriable MirrorError when the broker cannot be reached. */
  async start (): Promise<void> {
    if (this.#socket !== undefined || this.#stopping !== undefined) {
      throw new MirrorError(ErrorCodes.INTERNAL, `connection to ${this.#where} started twice, or after stop()`)
    }
    const reader = new FrameReader(frame => this.#onFrame(frame), this.#options.maxResponseBytes ?? 512 * 1024 * 1024)
    const unreadable = (error: unknown): void => this.#fail(this.#lost(`response from ${this.#where} unreadable: ${(error as Error).message}`, error))
    const socket = await this.#connect(reader, unreadable)
    this.#socket = socket
    // TLS sockets take no `onread`: their chunks come as data events.
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk)
      } catch (error) {
        unreadable(error)
      }
    })
    socket.on('error', error => this.#fail(this.#lost(`connection to ${this.#where}: ${error.message}`, error)))
    socket.on('close', () => this.#fail(this.#lost(`connection to ${this.#where} closed`)))
    try {
      await this.#negotiate()
      if (this.#options.sasl !== undefined) await this.#authenticate(this.#options.sasl)
    } catch (error) {
      this.#fail(this.#lost(`connection to ${this.#where} closed: it did not start`, error))
      throw error
    }
  }

  /**
   * KIP-152: SaslHandshake v1 names the mechanism, then SaslAuthenticate requests carry its tokens (with v0 they
   * would go as bare frames, which this connection does not speak). A refusal is an AUTHENTICATION MirrorError,
   * not retriable; the broker closes the connection after it. The same exchange renews the session (KIP-368:
   * the mechanism and the principal must stay those of the first authentication; ApiVersions is not asked again).
   */
  async #authenticate (mechanism: SaslMechanism): Promise<void> {
    const refused = (message: string): MirrorError => new MirrorError(ErrorCodes.AUTHENTICATION, `${this.#where}: SASL ${mechanism.name}: ${message}`)
    if ((this.#versions.get('SaslHandshake') ?? 0) < 1 || this.#versions.get('SaslAuthenticate') === undefined) {
      throw refused('the broker speaks neither SaslHandshake v1 nor SaslAuthenticate (KIP-152, Kafka 1.0 and later)')
    }
    const { response: handshake } = await this.#request('SaslHandshake', { mechanism: mechanism.name })
    if (handshake.errorCode !== 0) throw refused(`not enabled on this listener, which enables ${handshake.mechanisms.join(', ') || 'none'}`)
    await mechanism.authenticate(async token => {
      const { response: answer } = await this.#request('SaslAuthenticate', { authBytes: token })
      if (answer.errorCode !== 0) throw refused(`authentication failed: ${answer.errorMessage ?? `error code ${answer.errorCode}`}`)
      this.#sessionLifetimeMs = answer.sessionLifetimeMs ?? 0n
      return answer.authBytes
    }, { host: this.#options.host, port: this.#options.port })
    this.#scheduleReauthentication()
  }

  /** KIP-368: the session ends `sessionLifetimeMs` after the last SaslAuthenticate; renew it at 85-95 % of that. */
  #scheduleReauthentication (): void {
    if (this.#sessionLifetimeMs <= 0n || this.#failure !== undefined) return
    const delayMs = reauthenticationDelayMs(Number(this.#sessionLifetimeMs))
    this.#reauthenticateAtMs = performance.now() + delayMs
    this.#reauthenticationTimer = setTimeout(() => this.#reauthenticate(), delayMs)
    // An idle process is not kept alive by a session to renew.
    this.#reauthenticationTimer.unref()
  }

  /** Starts renewing the session unless that runs already; a refusal closes the connection with its error (KIP-368). */
  #reauthenticate (): void {
    const mechanism = this.#options.sasl
    if (this.#reauthenticating !== undefined || this.#failure !== undefined || mechanism === undefined) return
    clearTimeout(this.#reauthenticationTimer)
    this.#reauthenticationTimer = undefined
    this.#reauthenticateAtMs = undefined
    this.#reauthenticating = this.#authenticate(mechanism).then(() => {
      this.#reauthenticating = undefined
      this.#reauthentications++
      for (const held of this.#held.splice(0)) {
        clearTimeout(held.timer)
        held.write(performance.now() - held.heldAtMs)
      }
    }, (error: unknown) => {
      this.#reauthenticating = undefined
      this.#fail(error instanceof MirrorError ? error : this.#lost(`re-authentication to ${this.#where} failed: ${(error as Error).message}`, error))
    })
  }

  /**
   * KIP-368: how long the broker keeps the SASL session, in milliseconds from the last SaslAuthenticate; 0 when it
   * sets no limit (or no SASL). The connection renews the session before it ends (see the class comment).
   */
  get sessionLifetimeMs (): bigint {
    return this.#sessionLifetimeMs
  }

  /** Sessions renewed on this connection so far (KIP-368). */
  get reauthentications (): number {
    return this.#reauthentications
  }

  /** A retriable error for a connection that is gone or out of step. */
  #lost (message: string, cause?: unknown): MirrorError {
    return new MirrorError(ErrorCodes.CONNECTION, message, { retriable: true, cause })
  }

  /** A plain socket reads into `reader`'s buffers (Node's `onread`, no buffer allocated per read); a TLS socket emits data events. */
  #connect (reader: FrameReader, unreadable: (error: unknown) => void): Promise<Socket> {
    const { host, port, tls } = this.#options
    const onread = {
      buffer: () => reader.nextBuffer(),
      callback: (bytes: number): boolean => {
        try {
          reader.read(bytes)
        } catch (error) {
          unreadable(error)
        }
        return true
      },
    }
    const timeoutMs = this.#options.connectTimeoutMs ?? 10_000
    return new Promise((resolve, reject) => {
      const ready = tls === undefined ? 'connect' : 'secureConnect'
      // A spread copies enumerable properties only: the secrets `tlsOptions()` hides are taken over by name.
      const secrets = tls === undefined ? {} : Object.fromEntries(TLS_SECRET_FIELDS.filter(name => tls[name] !== undefined).map(name => [name, tls[name]]))
      const socket = tls === undefined
        ? netConnect({ host, port, onread })
        // SNI carries a host name only, never an address (RFC 6066).
        : tlsConnect({ ...tls, ...secrets, host, port, ...(isIP(host) === 0 ? { servername: tls.servername ?? host } : {}) })
      const timer = setTimeout(() => socket.destroy(new Error(`not connected within ${timeoutMs} ms`)), timeoutMs)
      const failed = (error: Error): void => {
        clearTimeout(timer)
        reject(new MirrorError(ErrorCodes.CONNECTION, `cannot connect to ${host}:${port}: ${error.message}`, { retriable: true, cause: error }))
      }
      socket.once('error', failed)
      socket.once(ready, () => {
        clearTimeout(timer)
        socket.off('error', failed)
        socket.setNoDelay(true)
        resolve(socket)
      })
    })
  }

  /**
   * KIP-35 and KIP-511: ApiVersions at the newest version we know, with our software name and version. A broker
   * older than that version answers UNSUPPORTED_VERSION in a v0 body listing its own ApiVersions range; we ask
   * again at the highest version both know, as Kafka's NetworkClient does.
   */
  async #negotiate (): Promise<void> {
    const request = { clientSoftwareName: SOFTWARE_NAME, clientSoftwareVersion: packageVersion().replace(/[^a-zA-Z0-9.-]/g, '-') }
    let version = knownVersions('ApiVersions')[1]
    let response = await this.send('ApiVersions', request, { version })
    if (response.errorCode === UNSUPPORTED_VERSION) {
      const brokerMax = response.apiKeys.find(api => api.apiKey === API_VERSIONS_KEY)?.maxVersion ?? 0
      version = Math.min(version, brokerMax)
      response = await this.send('ApiVersions', request, { version })
    }
    if (response.errorCode !== 0) {
      throw new MirrorError(ErrorCodes.KAFKA, `ApiVersions v${version} to ${this.#where}: error code ${response.errorCode}`, { retriable: false })
    }
    this.#versions = negotiateVersions(response.apiKeys)
  }

  /** The version of `api` negotiated with this broker; undefined when the broker and our codecs share none. */
  versionOf (api: WireApi): number | undefined {
    return this.#versions.get(api)
  }

  /** Sends `request` at the negotiated version of `api` (or `options.version`) and resolves with the broker's response. */
  async send<A extends WireApi> (api: A, request: RequestOf<A>, options: SendOptions = {}): Promise<ResponseOf<A>> {
    return (await this.sendMeasured(api, request, options)).response
  }

  /**
   * As `send`, and says how many bytes the response's frame holds and keeps alive: what a caller that keeps views of
   * the response (record batches) counts against a memory bound. While the session is being renewed (KIP-368) the
   * request waits and is written after it, in call order.
   */
  sendMeasured<A extends WireApi> (api: A, request: RequestOf<A>, options: SendOptions = {}): Promise<MeasuredResponse<ResponseOf<A>>> {
    if (this.#failure === undefined && this.#reauthenticateAtMs !== undefined && performance.now() >= this.#reauthenticateAtMs) {
      // The timer has not run yet (a busy event loop): the session may end before this request arrives.
      this.#reauthenticate()
    }
    if (this.#reauthenticating === undefined || SASL_APIS.has(api)) return this.#request(api, request, options)
    const write = this.#encode(api, request, options)
    if (write instanceof Error) return Promise.reject(write)
    return new Promise<MeasuredResponse<ResponseOf<A>>>((resolve, reject) => {
      const timeoutMs = this.#options.requestTimeoutMs ?? 30_000
      const timer = setTimeout(() => {
        this.#fail(this.#lost(`${api} to ${this.#where}: no response within ${timeoutMs} ms (held while the SASL session was renewed)`))
      }, timeoutMs)
      timer.unref()
      this.#held.push({
        write: elapsedMs => { write(timeoutMs - elapsedMs).then(resolve, reject) },
        reject,
        heldAtMs: performance.now(),
        timer,
      })
    })
  }

  /** Writes `request` now (the SASL exchange's own requests, and any request outside a re-authentication). */
  #request<A extends WireApi> (api: A, request: RequestOf<A>, options: SendOptions = {}): Promise<MeasuredResponse<ResponseOf<A>>> {
    const write = this.#encode(api, request, options)
    return write instanceof Error ? Promise.reject(write) : write(this.#options.requestTimeoutMs ?? 30_000)
  }

  /**
   * Encodes the body of `request` at once (a value the version cannot carry throws here, as `send` always did) and
   * returns what writes it with its header, or the error that refuses it before anything is written.
   */
  #encode<A extends WireApi> (
    api: A, request: RequestOf<A>, options: SendOptions
  ): Error | ((timeoutMs: number) => Promise<MeasuredResponse<ResponseOf<A>>>) {
    if (this.#failure !== undefined) return this.#failure
    if (this.#socket === undefined) return new MirrorError(ErrorCodes.INTERNAL, `request ${api} to ${this.#where} before start()`)
    const version = options.version ?? this.#versions.get(api)
    const [min, max] = knownVersions(api)
    if (version === undefined || version < min || version > max) {
      const message = `${this.#where} supports no version of ${api} our codecs know (${min}-${max})`
      return new MirrorError(ErrorCodes.KAFKA, message, { retriable: false, kafkaCode: 'UNSUPPORTED_VERSION' })
    }
    if (api === 'Produce' && (request as RequestOf<'Produce'>).acks === 0) {
      // A Produce with acks=0 gets no response at all: the correlation ids of later responses would not meet their requests.
      return new MirrorError(ErrorCodes.INTERNAL, 'Produce with acks=0: the wire layer sends only requests the broker answers')
    }
    const schemas = WIRE_API_SCHEMAS[api]
    const body = new WireWriter()
    encodeMessage(schemas.request as MessageSchema<RequestOf<A>>, version, request, body)
    return timeoutMs => this.#write(api, version, body, timeoutMs) as Promise<MeasuredResponse<ResponseOf<A>>>
  }

  #write (api: WireApi, version: number, body: WireWriter, timeoutMs: number): Promise<MeasuredResponse<unknown>> {
    const socket = this.#socket
    if (this.#failure !== undefined || socket === undefined) return Promise.reject(this.#failure)
    const schemas = WIRE_API_SCHEMAS[api]
    const correlationId = this.#nextCorrelationId
    this.#nextCorrelationId = (correlationId + 1) | 0
    const header = new WireWriter(64)
    // KIP-482: request header v2 (with tagged fields) for flexible versions, else v1.
    const fields = { requestApiKey: schemas.request.apiKey!, requestApiVersion: version, correlationId, clientId: this.#options.clientId }
    encodeMessage(REQUEST_HEADER_SCHEMA, inVersions(schemas.request.flexibleVersions, version) ? 2 : 1, fields, header)
    const size = Buffer.allocUnsafe(4)
    size.writeInt32BE(header.length + body.length)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const message = `${api} v${version} to ${this.#where}: no response within ${this.#options.requestTimeoutMs ?? 30_000} ms`
        this.#fail(this.#lost(message, Object.assign(new Error(message), { name: REQUEST_TIMEOUT_ERROR })))
      }, Math.max(0, timeoutMs))
      timer.unref()
      const duringReauthentication = this.#reauthenticating !== undefined
      this.#inFlight.set(correlationId, { api, version, duringReauthentication, requestBytes: 4 + header.length + body.length, resolve, reject, timer })
      socket.cork()
      socket.write(size)
      for (const chunk of header.chunks()) socket.write(chunk)
      for (const chunk of body.chunks()) socket.write(chunk)
      socket.uncork()
    })
  }

  #onFrame (frame: Buffer): void {
    const reader = new WireReader(frame)
    const correlationId = reader.int32()
    const oldest = this.#inFlight.keys().next()
    if (oldest.done === true || oldest.value !== correlationId) {
      const expected = oldest.done === true ? 'none in flight' : `expected ${oldest.value}`
      this.#fail(this.#lost(`response from ${this.#where} with correlation id ${correlationId}, ${expected}`))
      return
    }
    const request = this.#inFlight.get(correlationId)!
    this.#inFlight.delete(correlationId)
    clearTimeout(request.timer)
    const { response } = WIRE_API_SCHEMAS[request.api]
    try {
      // KIP-511: ApiVersions responses keep header v0 in every version, so that a client of any version can read
      // the error; for the others header v1 (with tagged fields) goes with a flexible version (KIP-482).
      reader.position = 0
      const flexible = inVersions(response.flexibleVersions, request.version)
      decodeMessage(RESPONSE_HEADER_SCHEMA, flexible && request.api !== 'ApiVersions' ? 1 : 0, reader)
      let version = request.version
      // KIP-511: UNSUPPORTED_VERSION to an ApiVersions request comes as a v0 body, whatever version was asked.
      if (request.api === 'ApiVersions' && reader.remaining >= 2 && frame.readInt16BE(reader.position) === UNSUPPORTED_VERSION) version = 0
      const decoded = decodeMessage(response as MessageSchema, version, reader)
      const retainedBytes = Math.max(frame.length, frame.buffer.byteLength)
      request.resolve({ response: decoded, frameBytes: frame.length, retainedBytes, requestBytes: request.requestBytes })
    } catch (error) {
      const message = `${request.api} v${request.version} response from ${this.#where} unreadable: ${(error as Error).message}`
      request.reject(new MirrorError(ErrorCodes.KAFKA, message, { cause: error }))
    }
  }

  /** Closes the connection and fails every request in flight or held with `error` (the first failure wins). */
  #fail (error: MirrorError): void {
    this.#failure ??= error
    this.#socket?.destroy()
    clearTimeout(this.#reauthenticationTimer)
    this.#reauthenticationTimer = undefined
    this.#reauthenticateAtMs = undefined
    for (const request of this.#inFlight.values()) {
      clearTimeout(request.timer)
      request.reject(this.#failure)
    }
    this.#inFlight.clear()
    for (const held of this.#held.splice(0)) {
      clearTimeout(held.timer)
      held.reject(this.#failure)
    }
  }

  /** Asserts invariants A to D of the class comment; throws naming the first one broken. */
  checkInvariants (): void {
    const ids = [...this.#inFlight.keys()]
    ids.forEach((id, i) => {
      const expected = (this.#nextCorrelationId - ids.length + i) | 0
      if (id !== expected) throw new Error(`invariant A: correlation id ${id} in flight at position ${i}, expected ${expected}`)
    })
    for (const [id, request] of this.#inFlight) {
      if (request.duringReauthentication && !SASL_APIS.has(request.api)) {
        throw new Error(`invariant B: ${request.api} (correlation id ${id}) written while the SASL session was renewed`)
      }
    }
    if (this.#held.length > 0 && this.#reauthenticating === undefined) {
      throw new Error(`invariant C: ${this.#held.length} requests held with no re-authentication running`)
    }
    if (this.#failure !== undefined && (this.#inFlight.size > 0 || this.#held.length > 0 || this.#reauthenticationTimer !== undefined)) {
      throw new Error(`invariant D: failed connection with ${this.#inFlight.size} in flight, ${this.#held.length} held, or a re-authentication timer`)
    }
  }

  /** Closes the connection; requests still in flight fail with a MIRROR_STOPPED error. Once-only: later calls wait for the first. */
  stop (): Promise<void> {
    this.#stopping ??= new Promise<void>(resolve => {
      const socket = this.#socket
      this.#fail(new MirrorError(ErrorCodes.STOPPED, `connection to ${this.#where} stopped`))
      if (socket === undefined || socket.closed) resolve()
      else socket.once('close', () => resolve())
    })
    return this.#stopping
  }
}
