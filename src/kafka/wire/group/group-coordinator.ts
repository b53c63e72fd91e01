import { ErrorCodes, MirrorError } from '../../../shared/errors.js'
import { BrokerConnection, type BrokerConnectionOptions } from '../broker-connection.js'
import { groupError } from './group-errors.js'

/** How to reach the cluster: brokers to ask first, and how to connect to any broker. */
export interface ClusterAccess {
  readonly bootstrap: ReadonlyArray<{ readonly host: string, readonly port: number }>
  /** Client id, TLS, SASL and connect timeout; the request timeout is the coordinator's own (see `GroupCoordinator`). */
  readonly connection: Omit<BrokerConnectionOptions, 'host' | 'port' | 'requestTimeoutMs'>
}

/** A subscribed topic as Metadata names it. */
export interface TopicMetadata {
  readonly name: string
  readonly topicId: string
  readonly partitionCount: number
}

/**
 * The connections a group member needs: one to a bootstrap broker (FindCoordinator, Metadata) and one to
 * its group's coordinator. `reset()` drops the coordinator's after NOT_COORDINATOR or a lost connection, and
 * the next `connection()` looks it up again. The coordinator's connection waits `requestTimeoutMs` for an
 * answer: a JoinGroup is answered only when the rebalance ends, so it must exceed the rebalance timeout
 * (KIP-62; Java's consumer waits the rebalance timeout plus 5 s for JoinGroup).
 */
export class GroupCoordinator {
  readonly #access: ClusterAccess
  readonly #groupId: string
  readonly #requestTimeoutMs: number
  #bootstrap: Promise<BrokerConnection> | undefined
  #coordinator: Promise<BrokerConnection> | undefined
  #stopped = false

  constructor (access: ClusterAccess, groupId: string, requestTimeoutMs: number) {
    if (access.bootstrap.length === 0) throw new MirrorError(ErrorCodes.CONFIG, 'a group member needs at least one bootstrap broker')
    this.#access = access
    this.#groupId = groupId
    this.#requestTimeoutMs = requestTimeoutMs
  }

  /** The connection to the group's coordinator, found with FindCoordinator (KIP-699's batched form from v4). */
  connection (): Promise<BrokerConnection> {
    if (this.#stopped) return Promise.reject(new MirrorError(ErrorCodes.STOPPED, `group ${this.#groupId}: member stopped`))
    const existing = this.#coordinator
    if (existing !== undefined) return existing
    const finding = this.#find()
    this.#coordinator = finding
    // A failed lookup is not kept: the next call looks the coordinator up again.
    finding.catch(() => { if (this.#coordinator === finding) this.#coordinator = undefined })
    return finding
  }

  async #find (): Promise<BrokerConnection> {
    const bootstrap = await this.#bootstrapConnection()
    let node: { host: string, port: number }
    if ((bootstrap.versionOf('FindCoordinator') ?? 0) >= 4) {
      const answer = await bootstrap.send('FindCoordinator', { keyType: 0, coordinatorKeys: [this.#groupId] })
      const found = answer.coordinators?.[0]
      if (found === undefined || found.errorCode !== 0) throw groupError('FindCoordinator', this.#groupId, found?.errorCode ?? 15, found?.errorMessage)
      node = found
    } else {
      const answer = await bootstrap.send('FindCoordinator', { key: this.#groupId, keyType: 0 })
      if ((answer.errorCode ?? 0) !== 0) throw groupError('FindCoordinator', this.#groupId, answer.errorCode!, answer.errorMessage)
      node = { host: answer.host!, port: answer.port! }
    }
    const connection = new BrokerConnection({ ...this.#access.connection, host: node.host, port: node.port, requestTimeoutMs: this.#requestTimeoutMs })
    await connection.start()
    if (this.#stopped) {
      await connection.stop()
      throw new MirrorError(ErrorCodes.STOPPED, `group ${this.#groupId}: member stopped`)
    }
    return connection
  }

  #bootstrapConnection (): Promise<BrokerConnection> {
    const existing = this.#bootstrap
    if (existing !== undefined) return existing
    const starting = (async () => {
      let lastError: unknown
      for (const { host, port } of this.#access.bootstrap) {
        const connection = new BrokerConnection({ ...this.#access.connection, host, port })
        try {
          await connection.start()
          return connection
        } catch (error) {
          lastError = error
        }
      }
      throw lastError
    })()
    this.#bootstrap = starting
    // As for the coordinator: a bootstrap connection that did not start is tried again at the next call.
    starting.catch(() => { if (this.#bootstrap === starting) this.#bootstrap = undefined })
    return starting
  }

  /** Forgets the coordinator (and the bootstrap connection when `bootstrapToo`), closing their connections. */
  reset (bootstrapToo = false): void {
    const coordinator = this.#coordinator
    this.#coordinator = undefined
    // Closing a connection that is already failed or not started has nothing to report.
    void coordinator?.then(connection => connection.stop(), () => undefined)
    if (bootstrapToo) {
      const bootstrap = this.#bootstrap
      this.#bootstrap = undefined
      void bootstrap?.then(connection => connection.stop(), () => undefined)
    }
  }

  /** Topic ids and partition counts of `topics` that exist (Metadata on the bootstrap connection). */
  async topics (topics: readonly string[]): Promise<TopicMetadata[]> {
    let answer
    try {
      answer = await (await this.#bootstrapConnection()).send('Metadata', { topics: topics.map(name => ({ name })), allowAutoTopicCreation: false })
    } catch (error) {
      this.reset(true)
      throw error
    }
    return answer.topics
      .filter(topic => topic.errorCode === 0 && topic.name !== null)
      .map(topic => ({ name: topic.name!, topicId: topic.topicId ?? '', partitionCount: topic.partitions.length }))
  }

  /** Closes both connections. Once-only. */
  async stop (): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    const connections = [this.#coordinator, this.#bootstrap]
    this.#coordinator = undefined
    this.#bootstrap = undefined
    for (const connection of connections) {
      // A connection that never started holds nothing to close.
      await connection?.then(started => started.stop(), () => undefined)
    }
  }
}
