import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createKafkaClient } from '../../src/kafka/client.js'
import { javaLoggingArg, javaLoggingConfig } from './java-main.js'
import { LocalKafkaError, type KafkaDistribution } from './kafka-distribution.js'
import { isAlive, livePid, portAnswers } from './local-cluster.js'

/** Where one node of a `NodeCluster` lives and listens. */
export interface KafkaNodeOptions {
  /** The cluster's name, for messages. */
  readonly clusterName: string
  /** KRaft `node.id` (1-based). */
  readonly nodeId: number
  /** PLAINTEXT listener port. */
  readonly port: number
  /** CONTROLLER listener port. */
  readonly controllerPort: number
  /** Folder holding this node's config, data, logs and pid file. */
  readonly dir: string
  /** JVM heap (-Xms/-Xmx). */
  readonly heap: string
  /** How long a start waits for the broker to be registered with the controller, in ms. */
  readonly startTimeoutMs: number
}

/** What `status()` reports of one node. */
export interface NodeStatus {
  readonly nodeId: number
  readonly bootstrap: string
  readonly running: boolean
  readonly frozen: boolean
  readonly pid?: number
  readonly dir: string
}

/**
 * One combined broker+controller process of a local multi-node KRaft cluster, with its own ports,
 * data dir, log and pid file. Every operation acts on this process alone: `stop()` (SIGTERM:
 * controlled shutdown, waits until it is gone), `kill()` (SIGKILL), `start()` on its existing
 * data, `freeze()` (SIGSTOP) and `thaw()` (SIGCONT). The data stays until the cluster removes it.
 */
export class KafkaNode {
  readonly options: KafkaNodeOptions

  constructor (options: KafkaNodeOptions) {
    this.options = options
  }

  get nodeId (): number { return this.options.nodeId }
  get bootstrap (): string { return `127.0.0.1:${this.options.port}` }
  get dir (): string { return this.options.dir }
  get dataDir (): string { return join(this.options.dir, 'data') }
  get propertiesFile (): string { return join(this.options.dir, 'server.properties') }
  get logFile (): string { return join(this.options.dir, 'server.log') }
  private get pidFile (): string { return join(this.options.dir, 'pid') }
  private get name (): string { return `cluster "${this.options.clusterName}" node ${this.options.nodeId}` }

  async pid (): Promise<number | undefined> {
    return await livePid(this.pidFile)
  }

  /** True when the process is stopped by SIGSTOP (state `T` in /proc). */
  async frozen (): Promise<boolean> {
    const pid = await this.pid()
    if (pid === undefined) return false
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
      return /\) T /.test(stat)
    } catch {
      // The process ended between the pid check and the read: not frozen.
      return false
    }
  }

  async status (): Promise<NodeStatus> {
    const pid = await this.pid()
    const frozen = await this.frozen()
    const running = pid !== undefined && !frozen && await portAnswers(this.options.port)
    return { nodeId: this.nodeId, bootstrap: this.bootstrap, running, frozen, dir: this.dir, ...(pid === undefined ? {} : { pid }) }
  }

  /** Launches the JVM on this node's config and data without waiting for it to serve; a no-op when it runs. */
  async launch (distribution: KafkaDistribution): Promise<void> {
    if (await this.pid() !== undefined) return
    const loggingConfig = join(this.dir, 'log4j.properties')
    await writeFile(loggingConfig, javaLoggingConfig(distribution, this.logFile))
    const out = openSync(join(this.dir, 'stdout.log'), 'a')
    const heap = this.options.heap
    const child = spawn('java', [
      `-Xms${heap}`, `-Xmx${heap}`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
      javaLoggingArg(distribution, loggingConfig),
      '-cp', distribution.classpath, 'kafka.Kafka', this.propertiesFile,
    ], { detached: true, stdio: ['ignore', out, out] })
    closeSync(out)
    child.unref()
    if (child.pid === undefined) throw new LocalKafkaError(`${this.name}: java did not start`)
    await writeFile(this.pidFile, `${child.pid}\n`)
  }

  /** Starts the node on its existing data (a no-op when it runs) and waits until it is a registered broker. */
  async start (distribution: KafkaDistribution): Promise<void> {
    await this.launch(distribution)
    await this.waitReady()
  }

  /**
   * Resolves once the broker answers on its port and the cluster it reaches lists it among the
   * live brokers (registered and unfenced with the controller).
   */
  async waitReady (timeoutMs = this.options.startTimeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs
    const pid = await this.pid()
    if (pid === undefined) throw new LocalKafkaError(`${this.name}: not running (start it first)\n${await this.logTail()}`)
    while (!await portAnswers(this.options.port)) {
      if (!isAlive(pid)) throw new LocalKafkaError(`${this.name}: the broker exited during start-up\n${await this.logTail()}`)
      if (Date.now() > deadline) {
        throw new LocalKafkaError(`${this.name}: port ${this.options.port} did not open within ${timeoutMs} ms\n${await this.logTail()}`)
      }
      await sleep(200)
    }
    const admin = createKafkaClient({
      alias: this.options.clusterName,
      brokers: [this.bootstrap],
      clientId: `local-${this.options.clusterName}-${this.nodeId}`,
      connectionTimeoutMs: 3_000,
      requestTimeoutMs: 10_000,
    }).admin()
    try {
      for (;;) {
        try {
          await admin.connect()
          const cluster = await admin.describeCluster()
          if (cluster.brokers.some(b => b.nodeId === this.nodeId)) return
        } catch (error) {
          if (!isAlive(pid)) throw new LocalKafkaError(`${this.name}: the broker exited during start-up\n${await this.logTail()}`)
          if (Date.now() > deadline) {
            throw new LocalKafkaError(`${this.name}: no admin answer within ${timeoutMs} ms (${(error as Error).message})\n${await this.logTail()}`)
          }
        }
        if (Date.now() > deadline) {
          throw new LocalKafkaError(`${this.name}: not listed among the cluster's brokers within ${timeoutMs} ms\n${await this.logTail()}`)
        }
        await sleep(300)
      }
    } finally {
      await admin.disconnect()
    }
  }

  /**
   * SIGTERM (the broker's controlled shutdown moves its leaderships away first), then waits until
   * the process is gone; SIGKILL after `graceMs`. The data stays for `start()`.
   */
  async stop ({ graceMs = 60_000 } = {}): Promise<void> {
    const pid = await this.pid()
    if (pid === undefined) return
    try { process.kill(pid, 'SIGTERM') } catch { /* already gone */ }
    // A frozen broker handles SIGTERM only once it runs again.
    try { process.kill(pid, 'SIGCONT') } catch { /* already gone */ }
    const deadline = Date.now() + graceMs
    while (isAlive(pid) && Date.now() < deadline) await sleep(100)
    if (isAlive(pid)) await this.kill()
    await rm(this.pidFile, { force: true })
  }

  /** SIGKILL, as a crash: no controlled shutdown, nothing flushed; waits until the process is gone. */
  async kill (): Promise<void> {
    const pid = await this.pid()
    if (pid === undefined) return
    try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
    while (isAlive(pid)) await sleep(50)
    await rm(this.pidFile, { force: true })
  }

  /** SIGSTOP: ports stay open, connections established, nothing answers (a hung broker). Resolves once the process is stopped, with its pid. */
  async freeze (): Promise<number> {
    const pid = await this.pid()
    if (pid === undefined) throw new LocalKafkaError(`${this.name}: no running broker to freeze (start it first)`)
    process.kill(pid, 'SIGSTOP')
    // The signal is delivered asynchronously: return once every thread is stopped.
    const deadline = Date.now() + 5_000
    while (!await this.frozen() && Date.now() < deadline) await sleep(20)
    return pid
  }

  /** SIGCONT: a frozen node goes on where it stopped; a no-op on one that runs or is gone. */
  async thaw (): Promise<void> {
    const pid = await this.pid()
    if (pid === undefined) return
    try { process.kill(pid, 'SIGCONT') } catch { /* gone */ }
  }

  /** The first ERROR/FATAL lines (the cause) and the last lines of the node's log. */
  async logTail (lines = 30): Promise<string> {
    for (const file of [this.logFile, join(this.dir, 'stdout.log')]) {
      if (!existsSync(file)) continue
      const all = (await readFile(file, 'utf8')).trimEnd().split('\n')
      if (all.length === 0 || all[0] === '') continue
      const errors = all.filter(line => /\] (ERROR|FATAL) |Exception|Caused by/.test(line)).slice(0, 8)
      return (errors.length > 0 ? `--- first errors in ${file} ---\n${errors.join('\n')}\n` : '') +
        `--- last lines of ${file} ---\n` + all.slice(-lines).join('\n')
    }
    return '(the node wrote no log)'
  }
}
