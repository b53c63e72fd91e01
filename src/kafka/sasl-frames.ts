/** kafkajs frames SASL bytes as Kafka BYTES: a 32-bit big-endian length, then the bytes. */
function sizePrefixed (bytes: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeInt32BE(bytes.length)
  return Buffer.concat([length, bytes])
}

/** The bytes of a Kafka BYTES field as kafkajs hands over a SaslAuthenticate answer; empty for a null or short field. */
function withoutSizePrefix (bytes: Buffer): Buffer {
  if (bytes.length < 4) return Buffer.alloc(0)
  const length = bytes.readInt32BE(0)
  return length < 0 ? Buffer.alloc(0) : bytes.subarray(4, 4 + length)
}

/** What kafkajs hands a `sasl.authenticationProvider` for one connection. */
export interface AuthenticationArgs {
  readonly host: string
  readonly port: number
  readonly logger: { debug: (message: string, extra?: object) => void }
  readonly saslAuthenticate: (exchange: {
    request: { encode: () => Promise<Buffer> }
    response: { decode: (bytes: Buffer) => Promise<Buffer>, parse: (bytes: Buffer) => Buffer }
  }) => Promise<Buffer | undefined>
}

/** One SaslAuthenticate round trip: `token` to the broker, its answer's bytes back (empty when it sent none). */
export async function saslRoundTrip (saslAuthenticate: AuthenticationArgs['saslAuthenticate'], token: Buffer): Promise<Buffer> {
  const answer = await saslAuthenticate({
    request: { encode: async () => sizePrefixed(token) },
    response: { decode: async bytes => withoutSizePrefix(bytes), parse: bytes => bytes },
  })
  return answer ?? Buffer.alloc(0)
}
