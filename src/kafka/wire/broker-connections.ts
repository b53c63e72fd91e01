import { ErrorCodes, MirrorError } from '../../shared/errors.js'
import { BrokerConnection, type BrokerConnectionOptions } from './broker-connection.js'

/** The node id under which `BrokerConnections` keeps its connection to a bootstrap broker. */
export const BOOTSTRAP_NODE = -1

export interface BrokerAddress {
  readonly host: string
  readonly port: number
}

/**
 * One started `BrokerConnection` per broker (by node id), opened on first use, and one to a bootstrap broker
 * (`BOOTSTRAP_NODE`, the bootstrap brokers taken in turn). A connection that failed to start is forgotten, so
 * the next use connects again; `drop` stops one that failed after it started. Brokers are learnt from Metadata.
 */
export class BrokerConnections {
  readonly #bootstrap: readonly BrokerAddress[]
  readonly #options: Omit<BrokerConnectionOptions, 'host' | 'port'>
  readonly #connections = new Map<number, Promise<BrokerConnection>>()
  readonly #brokers = new Map<number, BrokerAddress>()
  #bootstrapIndex = 0

  constructor (bootstrap: readonly BrokerAddress[], options: Omit<BrokerConnectionOptions, 'host' | 'port'>) {
    if (bootstrap.length === 0) throw new MirrorError(ErrorCodes.CONFIG, 'at least one bootstrap broker is needed')
    this.#bootstrap = bootstrap
    this.#options = options
  }

  /** Takes the brokers of a Metadata answer (node id, host, port). */
  learn (brokers: ReadonlyArray<{ readonly nodeId: number, readonly host: string, readonly port: number }>): void {
    for (const broker of brokers) this.#brokers.set(broker.nodeId, { host: broker.host, port: broker.port })
  }

  /** The started connection to `node`; rejects with a retriable MirrorError when it is unknown or cannot be reached. */
  get (node: number): Promise<BrokerConnection> {
    let connection = this.#connections.get(node)
    if (connection === undefined) {
      const address = node === BOOTSTRAP_NODE ? this.#bootstrap[this.#bootstrapIndex++ % this.#bootstrap.length]! : this.#brokers.get(node)
      if (address === undefined) return Promise.reject(new MirrorError(ErrorCodes.CONNECTION, `broker ${node} unknown`, { retriable: true }))
      const started = new BrokerConnection({ ...this.#options, ...address })
      const starting = started.start().then(() => started)
      starting.catch(() => {
        // Not started: forgotten, so that the next use connects again (its callers see the same failure).
        if (this.#connections.get(node) === starting) this.#connections.delete(node)
      })
      this.#connections.set(node, starting)
      connection = starting
    }
    return connection
  }

  /** Stops and forgets the connection to `node` (it failed): the next use connects again. */
  async drop (node: number): Promise<void> {
    const connection = this.#connections.get(node)
    if (connection === undefined) return
    this.#connections.delete(node)
    // A connection that never started has nothing to stop; its failure went to its callers.
    await (await connection.catch(() => undefined))?.stop()
  }

  /** Stops every connection. */
  async stopAll (): Promise<void> {
    const connections = [...this.#connections.keys()]
    await Promise.all(connections.map(node => this.drop(node)))
  }
}
