/**
 * The bare forwarder: the least a Node.js process can do to copy record batches from one Kafka
 * broker to another, as an anchor for the sidecar's CPU at a steady rate (`--contenders bare`,
 * latency mode). It is not a mirror: one source broker and one target broker that lead every
 * partition (the benchmark's single-node clusters), no consumer group, no commits, no idempotent
 * producer, no retries, no metrics; it stops at the first error. What it does do is what every
 * forward needs: a Fetch (v4) of every partition, each batch's CRC-32C checked, its header
 * rewritten for the target with the sidecar's own `batchForTarget`, and one Produce (v3, acks=all)
 * per round of one batch per partition, at most `MAX_IN_FLIGHT` of them unanswered.
 *
 *   node dist/bench/bare-forwarder.js SOURCE_HOST:PORT TARGET_HOST:PORT TOPIC PARTITIONS [raw|kafkajs]
 *
 * `raw` (the default) sends over its own sockets; `kafkajs` sends the same requests through
 * kafkajs' connection, request queue and encoder (as the project's own requests beside kafkajs'
 * do, `incremental-alter-configs.ts`): the difference is the cost of that layer alone.
 *
 * The topic is copied from offset 0 into the topic of the same name on the target, which must
 * exist with at least as many partitions.
 */
import { connect, type Socket } from 'node:net'
import { createKafkaClient } from '../src/kafka/client.js'
import { controllerRequestBroker, createInternalCluster, kafkajsProtocol, type ProtocolRequest } from '../src/kafka/kafkajs-internals.js'
import { batchesOf, checkProduced, FETCH, fetchRequest, PRODUCE, produceRequest } from './bare-forwarder-protocol.js'

const CLIENT_ID = 'bare-forwarder'
/** Produce requests sent and not answered yet, at most; the next fetch waits below it. */
const MAX_IN_FLIGHT = 5

/** Where the bare forwarder sends a request's body pieces; resolves with the answer after its header. */
interface FloorBroker {
  request: (api: { apiKey: number, version: number }, body: readonly Buffer[]) => Promise<Buffer>
}

/** One connection to one broker: requests out in order, answers matched by correlation id. */
class BrokerConnection implements FloorBroker {
  readonly #socket: Socket
  readonly #waiting = new Map<number, (body: Buffer) => void>()
  #correlation = 0
  #received: Buffer = Buffer.alloc(0)

  constructor (hostPort: string, onError: (error: Error) => void) {
    const [host, port] = hostPort.split(':')
    this.#socket = connect({ host, port: Number(port) })
    this.#socket.setNoDelay(true)
    this.#socket.on('error', onError)
    this.#socket.on('data', chunk => this.#read(chunk))
  }

  #read (chunk: Buffer): void {
    this.#received = this.#received.length === 0 ? chunk : Buffer.concat([this.#received, chunk])
    while (this.#received.length >= 4) {
      const size = this.#received.readInt32BE(0)
      if (this.#received.length < 4 + size) return
      const frame = this.#received.subarray(4, 4 + size)
      this.#received = this.#received.subarray(4 + size)
      const correlation = frame.readInt32BE(0)
      const answer = this.#waiting.get(correlation)
      this.#waiting.delete(correlation)
      answer?.(frame.subarray(4))
    }
  }

  /** Sends a request (header v1, then `body`'s pieces) and resolves with the answer after its header. */
  request (api: { apiKey: number, version: number }, body: readonly Buffer[]): Promise<Buffer> {
    const correlation = ++this.#correlation
    const header = Buffer.alloc(4 + 2 + 2 + 4 + 2 + CLIENT_ID.length)
    let size = header.length - 4
    for (const piece of body) size += piece.length
    header.writeInt32BE(size, 0)
    header.writeInt16BE(api.apiKey, 4)
    header.writeInt16BE(api.version, 6)
    header.writeInt32BE(correlation, 8)
    header.writeInt16BE(CLIENT_ID.length, 12)
    header.write(CLIENT_ID, 14, 'latin1')
    return new Promise(resolve => {
      this.#waiting.set(correlation, resolve)
      this.#socket.cork()
      this.#socket.write(header)
      for (const piece of body) this.#socket.write(piece)
      this.#socket.uncork()
    })
  }
}

/** The one broker at `address` through kafkajs' connection, request queue and encoder. */
async function kafkajsBroker (address: string): Promise<FloorBroker> {
  const cluster = createInternalCluster(createKafkaClient({ alias: address, brokers: [address], clientId: CLIENT_ID }))
  await cluster.connect()
  // On a single-node cluster the controller is the broker that leads every partition.
  const broker = await controllerRequestBroker(cluster)
  return {
    request: async (api, body) => await broker.send(api.apiKey, [api.version], (version): ProtocolRequest => ({
      request: {
        apiKey: api.apiKey,
        apiVersion: version,
        apiName: api.apiKey === FETCH.apiKey ? 'Fetch' : 'Produce',
        encode: async () => {
          const encoder = kafkajsProtocol.encoder()
          for (const piece of body) encoder.writeBuffer(piece)
          return encoder
        },
      },
      response: { decode: async (bytes: Buffer) => bytes, parse: async (answer: unknown) => answer },
    })) as Buffer,
  }
}

async function forward (source: FloorBroker, target: FloorBroker, topic: string, partitions: number): Promise<never> {
  const offsets = Array.from({ length: partitions }, () => 0n)
  let inFlight = 0
  let belowLimit: (() => void) | undefined
  for (;;) {
    const batches = batchesOf(await source.request(FETCH, fetchRequest(topic, offsets)), offsets)
    // Round k holds the k-th batch of every partition: a partition's batches keep their order.
    const rounds: Array<Map<number, Buffer>> = []
    const perPartition = new Map<number, number>()
    for (const { partition, batch } of batches) {
      const k = perPartition.get(partition) ?? 0
      perPartition.set(partition, k + 1)
      if (rounds[k] === undefined) rounds[k] = new Map()
      rounds[k]!.set(partition, batch)
    }
    for (const round of rounds) {
      while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>(resolve => { belowLimit = resolve })
      inFlight++
      void target.request(PRODUCE, produceRequest(topic, round)).then(answer => {
        checkProduced(answer)
        inFlight--
        belowLimit?.()
        belowLimit = undefined
      }).catch(fail)
    }
  }
}

function fail (error: unknown): never {
  process.stderr.write(`bare-forwarder: ${(error as Error).message}\n`)
  process.exit(1)
}

const [sourceAddress, targetAddress, topic, partitionsText, via = 'raw'] = process.argv.slice(2)
const partitions = Number(partitionsText)
if (
  sourceAddress === undefined || targetAddress === undefined || topic === undefined ||
  !Number.isSafeInteger(partitions) || partitions <= 0 || (via !== 'raw' && via !== 'kafkajs')
) {
  process.stderr.write('usage: bare-forwarder SOURCE_HOST:PORT TARGET_HOST:PORT TOPIC PARTITIONS [raw|kafkajs]\n')
  process.exit(2)
}
process.on('SIGTERM', () => process.exit(0))
const brokerAt = async (address: string): Promise<FloorBroker> => via === 'raw' ? new BrokerConnection(address, fail) : await kafkajsBroker(address)
Promise.all([brokerAt(sourceAddress), brokerAt(targetAddress)])
  .then(async ([source, target]) => await forward(source, target, topic, partitions))
  .catch(fail)
