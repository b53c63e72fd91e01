import { connect as netConnect, isIP, type Socket } from 'node:net'
import { connect as tlsConnect, type ConnectionOptions as TlsConnectionOptions } from 'node:tls'
import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { packageVersion } from '../../shared/package-version.js'
import { knownVersions, negotiateVersions, UNSUPPORTED_VERSION, type WireApi } from './api-versions.js'
import { FrameReader } from './frame-reader.js'
import { decodeMessage, encodeMessage } from './message-codec.js'
import { inVersions, type MessageSchema } from './message-schema.js'
import type { SaslMechanism } from './sasl-mechanism.js'
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
  /** Options for node:tls (`ca`, `cert`, `key`, `rejectUnauthorized`, ...); absent: plain TCP. */
  readonly tls?: TlsConnectionOptions
  /** SASL: authenticate with this mechanism after ApiVersions, before any other request (KIP-152); absent: none. */
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
  readonly requestBytes: number
  readonly resolve: (response: MeasuredResponse<unknown>) => void
  readonly reject: (error: Error) => void
  readonly timer: NodeJS.Timeout
}

/** KIP-511: the client's software name and version, as ApiVersions v3+ sends them (they must match `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`). */
const SOFTWARE_NAME = 'kafka-mirror-sidecar'
const API_VERSIONS_KEY = WIRE_API_SCHEMAS.ApiVersions.request.apiKey!

/**
 * One TCP (or TLS) connection to one broker. `start()` connects and negotiates the version of each API
 * with ApiVersions (KIP-35); `send()` then writes a request and resolves with its decoded response.
 * Requests are pipelined: any number may be in flight, written in the order `send` was called.
 *
 * Invariants: Kafka answers the requests of a connection in the order it received them, so each response's
 * correlation id must be the oldest one in flight; any other closes the connection (the stream is out of
 * step). A request timing out closes the connection too, as Kafka's own client does: what the broker did
 * with the requests in flight is unknown, and every one of them fails with a retriable MirrorError.
 * Response bytes and records are views of the response frame (see `FrameReader`). Writes are not held
 * back while the socket's buffer is full: callers bound what they keep in flight. `stop()` is once-only
 * and fails the requests still in flight; callers drain before they stop. A stopped connection does not start again.
 */
export class BrokerConnection {
  readonly #options: BrokerConnectionOptions
  readonly #inFlight = new Map<number, InFlight>()
  #socket: Socket | undefined
  #nextCorrelationId = 0
  #versions = new Map<WireApi, number>()
  #failure: MirrorError | undefined
  #sessionLifetimeMs = 0n
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
    const socket = await this.#connect()
    this.#socket = socket
    const reader = new FrameReader(frame => this.#onFrame(frame), this.#options.maxResponseBytes ?? 512 * 1024 * 1024)
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk)
      } catch (error) {
        this.#fail(this.#lost(`response from ${this.#where} unreadable: ${(error as Error).message}`, error))
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
   * not retriable; the broker closes the connection after it.
   */
  async #authenticate (mechanism: SaslMechanism): Promise<void> {
    const refused = (message: string): MirrorError => new MirrorError(ErrorCodes.AUTHENTICATION, `${this.#where}: SASL ${mechanism.name}: ${message}`)
    if ((this.#versions.get('SaslHandshake') ?? 0) < 1 || this.#versions.get('SaslAuthenticate') === undefined) {
      throw refused('the broker speaks neither SaslHandshake v1 nor SaslAuthenticate (KIP-152, Kafka 1.0 and later)')
    }
    const handshake = await this.send('SaslHandshake', { mechanism: mechanism.name })
    if (handshake.errorCode !== 0) throw refused(`not enabled on this listener, which enables ${handshake.mechanisms.join(', ') || 'none'}`)
    await mechanism.authenticate(async token => {
      const answer = await this.send('SaslAuthenticate', { authBytes: token })
      if (answer.errorCode !== 0) throw refused(`authentication failed: ${answer.errorMessage ?? `error code ${answer.errorCode}`}`)
      this.#sessionLifetimeMs = answer.sessionLifetimeMs ?? 0n
      return answer.authBytes
    })
  }

  /**
   * KIP-368: how long the broker keeps the SASL session, in milliseconds from the last SaslAuthenticate; 0 when it
   * sets no limit (or no SASL). The connection does not re-authenticate: past that time the broker closes it, and
   * the connection fails retriably like any closed one.
   */
  get sessionLifetimeMs (): bigint {
    return this.#sessionLifetimeMs
  }

  /** A retriable error for a connection that is gone or out of step. */
  #lost (message: string, cause?: unknown): MirrorError {
    return new MirrorError(ErrorCodes.CONNECTION, message, { retriable: true, cause })
  }

  #connect (): Promise<Socket> {
    const { host, port, tls } = this.#options
    const timeoutMs = this.#options.connectTimeoutMs ?? 10_000
    return new Promise((resolve, reject) => {
      const ready = tls === undefined ? 'connect' : 'secureConnect'
      const socket = tls === undefined
        ? netConnect({ host, port })
        // SNI carries a host name only, never an address (RFC 6066).
        : tlsConnect({ ...tls, host, port, ...(isIP(host) === 0 ? { servername: tls.servername ?? host } : {}) })
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
   * the response (record batches) counts against a memory bound.
   */
  sendMeasured<A extends WireApi> (api: A, request: RequestOf<A>, options: SendOptions = {}): Promise<MeasuredResponse<ResponseOf<A>>> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    const socket = this.#socket
    if (socket === undefined) return Promise.reject(new MirrorError(ErrorCodes.INTERNAL, `request ${api} to ${this.#where} before start()`))
    const version = options.version ?? this.#versions.get(api)
    const [min, max] = knownVersions(api)
    if (version === undefined || version < min || version > max) {
      const message = `${this.#where} supports no version of ${api} our codecs know (${min}-${max})`
      return Promise.reject(new MirrorError(ErrorCodes.KAFKA, message, { retriable: false, kafkaCode: 'UNSUPPORTED_VERSION' }))
    }
    if (api === 'Produce' && (request as RequestOf<'Produce'>).acks === 0) {
      // A Produce with acks=0 gets no response at all: the correlation ids of later responses would not meet their requests.
      return Promise.reject(new MirrorError(ErrorCodes.INTERNAL, 'Produce with acks=0: the wire layer sends only requests the broker answers'))
    }
    const schemas = WIRE_API_SCHEMAS[api]
    const correlationId = this.#nextCorrelationId
    this.#nextCorrelationId = (correlationId + 1) | 0
    const writer = new WireWriter()
    // KIP-482: request header v2 (with tagged fields) for flexible versions, else v1.
    const header = { requestApiKey: schemas.request.apiKey!, requestApiVersion: version, correlationId, clientId: this.#options.clientId }
    encodeMessage(REQUEST_HEADER_SCHEMA, inVersions(schemas.request.flexibleVersions, version) ? 2 : 1, header, writer)
    encodeMessage(schemas.request as MessageSchema<RequestOf<A>>, version, request, writer)
    const size = Buffer.allocUnsafe(4)
    size.writeInt32BE(writer.length)
    return new Promise<MeasuredResponse<ResponseOf<A>>>((resolve, reject) => {
      const timeoutMs = this.#options.requestTimeoutMs ?? 30_000
      const timer = setTimeout(() => {
        this.#fail(this.#lost(`${api} v${version} to ${this.#where}: no response within ${timeoutMs} ms`))
      }, timeoutMs)
      timer.unref()
      const answered = resolve as (response: MeasuredResponse<unknown>) => void
      this.#inFlight.set(correlationId, { api, version, requestBytes: 4 + writer.length, resolve: answered, reject, timer })
      socket.cork()
      socket.write(size)
      for (const chunk of writer.chunks()) socket.write(chunk)
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

  /** Closes the connection and fails every request in flight with `error` (the first failure wins). */
  #fail (error: MirrorError): void {
    this.#failure ??= error
    this.#socket?.destroy()
    for (const request of this.#inFlight.values()) {
      clearTimeout(request.timer)
      request.reject(this.#failure)
    }
    this.#inFlight.clear()
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
