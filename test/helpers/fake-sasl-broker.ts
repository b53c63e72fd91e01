import { checkAwsMskIamPayload } from './sigv4.js'
import { createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP server on 127.0.0.1 that speaks just enough of the Kafka protocol for a client to
 * authenticate: ApiVersions (v0-v2; a newer version is answered UNSUPPORTED_VERSION with a v0 body,
 * as a broker does, KIP-511), SaslHandshake (v0-v1) enabling `mechanism`, SaslAuthenticate (v0-v1)
 * and Metadata v0 (this one broker, no topics). Each SaslAuthenticate's bytes go to `authenticate`,
 * which answers the bytes to send back or an error message (SASL_AUTHENTICATION_FAILED), and a
 * session lifetime (KIP-368) to grant with them, 0 when none is given. As Kafka's
 * `SaslServerAuthenticator`, it closes a connection that sends any other request between a
 * SaslHandshake and the SaslAuthenticate that completes it (counted in `requestsDuringAuthentication`).
 * Not a broker: no data is stored or served.
 */
export class FakeSaslBroker {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  readonly mechanisms: string[] = []
  /** Requests other than SASL ones received while a connection authenticated: each closed its connection. */
  requestsDuringAuthentication = 0
  readonly #mechanism: string
  readonly #authenticate: (authBytes: Buffer) => { bytes: Buffer, sessionLifetimeMs?: bigint } | { error: string }
  port = 0

  constructor (mechanism: string, authenticate: (authBytes: Buffer) => { bytes: Buffer, sessionLifetimeMs?: bigint } | { error: string }) {
    this.#mechanism = mechanism
    this.#authenticate = authenticate
    this.#server = createServer(socket => { this.#serve(socket) })
  }

  async start (): Promise<void> {
    await new Promise<void>(resolve => this.#server.listen(0, '127.0.0.1', resolve))
    this.port = (this.#server.address() as { port: number }).port
  }

  async stop (): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise<void>(resolve => this.#server.close(() => { resolve() }))
  }

  #serve (socket: Socket): void {
    this.#sockets.add(socket)
    socket.on('close', () => this.#sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    let pending = Buffer.alloc(0)
    const state = { authenticating: false }
    socket.on('data', chunk => {
      pending = Buffer.concat([pending, chunk])
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const size = pending.readInt32BE(0)
        const frame = pending.subarray(4, 4 + size)
        pending = pending.subarray(4 + size)
        if (state.authenticating && ![17, 36].includes(frame.readInt16BE(0))) {
          this.requestsDuringAuthentication++
          socket.destroy()
          return
        }
        const body = this.#answer(frame, state)
        const header = Buffer.alloc(8)
        header.writeInt32BE(4 + body.length, 0)
        header.writeInt32BE(frame.readInt32BE(4), 4)
        socket.write(Buffer.concat([header, body]))
      }
    })
  }

  #answer (frame: Buffer, state: { authenticating: boolean }): Buffer {
    const apiKey = frame.readInt16BE(0)
    const apiVersion = frame.readInt16BE(2)
    const clientIdLength = frame.readInt16BE(8)
    const body = frame.subarray(10 + Math.max(0, clientIdLength))
    const w = new Writer()
    if (apiKey === 18 && apiVersion > 2) {
      w.int16(35).int32(1).int16(18).int16(0).int16(2)
    } else if (apiKey === 18) {
      w.int16(0).int32(4)
      for (const [key, min, max] of [[3, 0, 0], [17, 0, 1], [18, 0, 2], [36, 0, 1]] as const) w.int16(key).int16(min).int16(max)
      if (apiVersion >= 1) w.int32(0)
    } else if (apiKey === 17) {
      const mechanism = body.subarray(2, 2 + body.readInt16BE(0)).toString('utf8')
      this.mechanisms.push(mechanism)
      state.authenticating = mechanism === this.#mechanism
      w.int16(mechanism === this.#mechanism ? 0 : 33).int32(1).string(this.#mechanism)
    } else if (apiKey === 36) {
      const answer = this.#authenticate(body.subarray(4, 4 + body.readInt32BE(0)))
      if ('error' in answer) w.int16(58).string(answer.error).bytes(Buffer.alloc(0))
      else w.int16(0).int16(-1).bytes(answer.bytes)
      // The fake cannot tell a mechanism's last round trip from the others: any accepted one ends the check (AWS_MSK_IAM has one).
      if (!('error' in answer)) state.authenticating = false
      if (apiVersion >= 1) w.int64('error' in answer ? 0n : answer.sessionLifetimeMs ?? 0n)
    } else if (apiKey === 3) {
      w.int32(1).int32(1).string('127.0.0.1').int32(this.port).int32(0)
    } else {
      throw new Error(`FakeSaslBroker: API key ${apiKey} is not spoken here`)
    }
    return w.buffer()
  }
}

class Writer {
  readonly #parts: Buffer[] = []
  int16 (value: number): this { const b = Buffer.alloc(2); b.writeInt16BE(value); this.#parts.push(b); return this }
  int32 (value: number): this { const b = Buffer.alloc(4); b.writeInt32BE(value); this.#parts.push(b); return this }
  int64 (value: bigint): this { const b = Buffer.alloc(8); b.writeBigInt64BE(value); this.#parts.push(b); return this }
  string (value: string): this { const bytes = Buffer.from(value, 'utf8'); this.int16(bytes.length); this.#parts.push(bytes); return this }
  bytes (value: Buffer): this { this.int32(value.length); this.#parts.push(value); return this }
  buffer (): Buffer { return Buffer.concat(this.#parts) }
}

/**
 * A fake MSK broker with IAM access control (not started): each AWS_MSK_IAM payload it receives is kept in
 * `payloads` and checked against AWS's documented SigV4 with `secretAccessKey` (`checkAwsMskIamPayload`); a valid
 * one is answered as MSK answers it, with `sessionLifetimeMs` (KIP-368), an invalid one refused with the problem.
 */
export function mskIamBroker (secretAccessKey: string, sessionLifetimeMs = 0n): { broker: FakeSaslBroker, payloads: Array<Record<string, string>> } {
  const payloads: Array<Record<string, string>> = []
  const broker = new FakeSaslBroker('AWS_MSK_IAM', bytes => {
    const payload = JSON.parse(bytes.toString('utf8')) as Record<string, string>
    payloads.push(payload)
    const problem = checkAwsMskIamPayload(payload, secretAccessKey)
    if (problem !== undefined) return { error: problem }
    return { bytes: Buffer.from(JSON.stringify({ version: '2020_10_22', 'request-id': `r-${payloads.length}` })), sessionLifetimeMs }
  })
  return { broker, payloads }
}
