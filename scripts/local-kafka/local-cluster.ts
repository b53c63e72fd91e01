import { spawn, execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, openSync, closeSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { createKafkaClient } from '../../src/kafka/client.js'
import type { ClusterConnection } from '../../src/config/cluster-connection.js'
import { ensureKafkaDistribution, kafkaVersionFromEnv, LocalKafkaError, type KafkaDistribution } from './kafka-distribution.js'
import { clustersHome } from './paths.js'

const execFileAsync = promisify(execFile)

/** One extra listener, e.g. `SASL_SSL` on its own port, with the broker keys it needs. */
export interface ExtraListener {
  readonly name: string
  readonly port: number
  readonly securityProtocol: 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL'
}

/** A single-node KRaft cluster (combined broker and controller) on 127.0.0.1. */
export interface LocalClusterOptions {
  /** Folder name under the clusters home and the name in status output. */
  readonly name: string
  /** PLAINTEXT listener port; the controller listens on `port + 1`. */
  readonly port: number
  /** Kafka release; default `KAFKA_VERSION` or the pinned 4.x release. */
  readonly version?: string
  /** JVM heap (-Xms/-Xmx); default `KAFKA_HEAP` or `512m`. */
  readonly heap?: string
  /** Extra or overriding broker properties, e.g. `{ 'message.max.bytes': '2048' }`. */
  readonly brokerProperties?: Readonly<Record<string, string>>
  readonly extraListeners?: readonly ExtraListener[]
  /** Java system properties of the broker JVM (`-Dname=value`), e.g. Kafka 4's `org.apache.kafka.sasl.oauthbearer.allowed.urls`. */
  readonly jvmProperties?: Readonly<Record<string, string>>
  /** Extra `kafka-storage format` arguments, e.g. `['--add-scram', 'SCRAM-SHA-512=[name=a,password=b]']`. */
  readonly formatArgs?: readonly string[]
  /** How long `start()` waits for the broker to serve admin requests; default 90000. */
  readonly startTimeoutMs?: number
}

export interface ClusterStatus {
  readonly name: string
  readonly bootstrap: string
  readonly running: boolean
  readonly pid?: number
  readonly dir: string
}

/** True while a process with `pid` exists (a frozen one included). */
/** The pid written in `pidFile` while that process is alive; undefined when there is none. */
export async function livePid (pidFile: string): Promise<number | undefined> {
  if (!existsSync(pidFile)) return undefined
  const pid = Number((await readFile(pidFile, 'utf8')).trim())
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined
}

export function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function portAnswers (port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise(resolve => {
    const socket = createConnection({ host: '127.0.0.1', port })
    const done = (answer: boolean): void => { socket.destroy(); resolve(answer) }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** Kafka's `Uuid.randomUuid()` shape: 16 random bytes, base64url without padding, not starting with '-'. */
export function randomClusterId (): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

/**
 * A local broker process with its own config, data dir, log file and pid file. `start()` reuses a
 * broker already running from an earlier `start()` (in this or another process); `stop()` kills it
 * and removes its data.
 */
export class LocalCluster {
  readonly options: LocalClusterOptions
  readonly dir: string

  constructor (options: LocalClusterOptions) {
    this.options = options
    this.dir = join(clustersHome(), options.name)
  }

  get bootstrap (): string { return `127.0.0.1:${this.options.port}` }
  get controllerPort (): number { return this.options.port + 1 }
  get logFile (): string { return join(this.dir, 'server.log') }
  private get pidFile (): string { return join(this.dir, 'pid') }

  /** A plaintext connection to this cluster, for admin and test clients. */
  connection (clientId = `local-${this.options.name}`): ClusterConnection {
    return { alias: this.options.name, brokers: [this.bootstrap], clientId, connectionTimeoutMs: 3_000, requestTimeoutMs: 15_000 }
  }

  async pid (): Promise<number | undefined> {
    return await livePid(this.pidFile)
  }

  async status (): Promise<ClusterStatus> {
    const pid = await this.pid()
    const running = pid !== undefined && await portAnswers(this.options.port)
    return { name: this.options.name, bootstrap: this.bootstrap, running, dir: this.dir, ...(pid === undefined ? {} : { pid }) }
  }

  /** Starts the broker unless it already runs; resolves once it answers admin requests. */
  async start (): Promise<void> {
    const existing = await this.pid()
    if (existing !== undefined) {
      await this.waitReady(existing)
      return
    }
    for (const port of this.ports()) {
      if (await portAnswers(port)) {
        throw new LocalKafkaError(`cluster "${this.options.name}": port ${port} on 127.0.0.1 is already in use by another process; stop it or choose other ports (see README: KAFKA_SOURCE_PORT / KAFKA_TARGET_PORT)`)
      }
    }
    const distribution = await ensureKafkaDistribution(this.options.version ?? kafkaVersionFromEnv())
    await rm(this.dir, { recursive: true, force: true })
    await mkdir(join(this.dir, 'data'), { recursive: true })
    const serverProperties = join(this.dir, 'server.properties')
    await writeFile(serverProperties, this.serverProperties())
    await writeFile(join(this.dir, 'log4j.properties'), this.loggingConfig(distribution))
    await this.format(distribution, serverProperties)

    await this.launch(distribution)
  }

  /** Kills the broker (SIGTERM, then SIGKILL after `graceMs`) and removes its folder. */
  async stop ({ graceMs = 10_000, keepData = false } = {}): Promise<void> {
    const pid = await this.pid()
    if (pid !== undefined) {
      try { process.kill(pid, 'SIGTERM') } catch { /* already gone */ }
      // A broker left frozen by freeze() handles SIGTERM only once it runs again.
      try { process.kill(pid, 'SIGCONT') } catch { /* already gone */ }
      const deadline = Date.now() + graceMs
      while (isAlive(pid) && Date.now() < deadline) await sleep(100)
      if (isAlive(pid)) {
        try { process.kill(pid, 'SIGKILL') } catch { /* already gone */ }
        while (isAlive(pid)) await sleep(50)
      }
    }
    if (!keepData) await rm(this.dir, { recursive: true, force: true })
    else await rm(this.pidFile, { force: true })
  }

  /** Stops the broker process but keeps its data, so `resume()` brings back the same cluster. */
  async pause (): Promise<void> {
    await this.stop({ keepData: true })
  }

  /**
   * Freezes the broker process (SIGSTOP): its ports stay open and its connections established, but
   * nothing answers, as a hung or partitioned broker; `thaw()` lets it go on where it stopped.
   * Returns the pid frozen, for a caller that must thaw it from a signal handler.
   */
  async freeze (): Promise<number> {
    const pid = await this.pid()
    if (pid === undefined) throw new LocalKafkaError(`cluster "${this.options.name}": no running broker to freeze (start it first)`)
    process.kill(pid, 'SIGSTOP')
    return pid
  }

  /** Lets a broker frozen by `freeze()` run again (SIGCONT; a no-op on a broker that runs or is gone). */
  async thaw (): Promise<void> {
    const pid = await this.pid()
    if (pid !== undefined) {
      try { process.kill(pid, 'SIGCONT') } catch { /* gone */ }
    }
  }

  /** Restarts a broker stopped by `pause()` on its existing data. */
  async resume (): Promise<void> {
    if (await this.pid() !== undefined) return
    await this.launch(await ensureKafkaDistribution(this.options.version ?? kafkaVersionFromEnv()))
  }

  private async launch (distribution: KafkaDistribution): Promise<void> {
    const heap = this.options.heap ?? process.env.KAFKA_HEAP ?? '512m'
    const out = openSync(join(this.dir, 'stdout.log'), 'a')
    const child = spawn('java', [
      `-Xms${heap}`, `-Xmx${heap}`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
      ...Object.entries(this.options.jvmProperties ?? {}).map(([name, value]) => `-D${name}=${value}`),
      ...this.loggingArgs(distribution),
      '-cp', distribution.classpath, 'kafka.Kafka', join(this.dir, 'server.properties'),
    ], { detached: true, stdio: ['ignore', out, out] })
    closeSync(out)
    child.unref()
    if (child.pid === undefined) throw new LocalKafkaError(`cluster "${this.options.name}": java did not start`)
    await writeFile(this.pidFile, `${child.pid}\n`)
    await this.waitReady(child.pid)
  }

  private ports (): number[] {
    return [this.options.port, this.controllerPort, ...(this.options.extraListeners ?? []).map(l => l.port)]
  }

  private serverProperties (): string {
    const port = this.options.port
    const extra = this.options.extraListeners ?? []
    const listeners = [`PLAINTEXT://127.0.0.1:${port}`, `CONTROLLER://127.0.0.1:${this.controllerPort}`, ...extra.map(l => `${l.name}://127.0.0.1:${l.port}`)]
    const advertised = [`PLAINTEXT://127.0.0.1:${port}`, ...extra.map(l => `${l.name}://127.0.0.1:${l.port}`)]
    const protocolMap = ['CONTROLLER:PLAINTEXT', 'PLAINTEXT:PLAINTEXT', ...extra.map(l => `${l.name}:${l.securityProtocol}`)]
    const properties: Record<string, string> = {
      'process.roles': 'broker,controller',
      'node.id': '1',
      'controller.quorum.voters': `1@127.0.0.1:${this.controllerPort}`,
      listeners: listeners.join(','),
      'advertised.listeners': advertised.join(','),
      'controller.listener.names': 'CONTROLLER',
      'inter.broker.listener.name': 'PLAINTEXT',
      'listener.security.protocol.map': protocolMap.join(','),
      'log.dirs': join(this.dir, 'data'),
      'num.partitions': '1',
      'offsets.topic.replication.factor': '1',
      'offsets.topic.num.partitions': '4',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'transaction.state.log.num.partitions': '4',
      'group.initial.rebalance.delay.ms': '0',
      'log.flush.interval.messages': '9223372036854775807',
      'auto.create.topics.enable': 'false',
      ...this.options.brokerProperties,
    }
    return Object.entries(properties).map(([key, value]) => `${key}=${value}`).join('\n') + '\n'
  }

  private loggingConfig (distribution: KafkaDistribution): string {
    if (distribution.logging === 'log4j2') {
      return [
        'status = warn',
        'appender.file.type = File',
        'appender.file.name = FILE',
        `appender.file.fileName = ${this.logFile}`,
        'appender.file.layout.type = PatternLayout',
        'appender.file.layout.pattern = [%d] %p %m (%c)%n',
        'rootLogger.level = INFO',
        'rootLogger.appenderRef.file.ref = FILE',
        'logger.kafka.name = kafka',
        'logger.kafka.level = INFO',
        'logger.state.name = state.change.logger',
        'logger.state.level = WARN',
      ].join('\n') + '\n'
    }
    return [
      'log4j.rootLogger=INFO, file',
      'log4j.appender.file=org.apache.log4j.FileAppender',
      `log4j.appender.file.File=${this.logFile}`,
      'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
      'log4j.logger.state.change.logger=WARN',
    ].join('\n') + '\n'
  }

  private loggingArgs (distribution: KafkaDistribution): string[] {
    const file = join(this.dir, 'log4j.properties')
    return distribution.logging === 'log4j2'
      ? [`-Dlog4j2.configurationFile=file:${file}`]
      : [`-Dlog4j.configuration=file:${file}`]
  }

  private async format (distribution: KafkaDistribution, serverProperties: string): Promise<void> {
    try {
      await execFileAsync('java', [
        '-Xmx256m', ...this.loggingArgs(distribution), '-cp', distribution.classpath, 'kafka.tools.StorageTool',
        'format', '-t', randomClusterId(), '-c', serverProperties, ...(this.options.formatArgs ?? []),
      ])
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '') + String((error as { stdout?: string }).stdout ?? '')
      throw new LocalKafkaError(`cluster "${this.options.name}": kafka-storage format failed:\n${stderr.trim()}`)
    }
  }

  /** The first ERROR/FATAL lines (the cause) and the last lines of the broker's log. */
  private async logTail (lines = 30): Promise<string> {
    for (const file of [this.logFile, join(this.dir, 'stdout.log')]) {
      if (!existsSync(file)) continue
      const all = (await readFile(file, 'utf8')).trimEnd().split('\n')
      if (all.length === 0 || all[0] === '') continue
      const errors = all.filter(line => /\] (ERROR|FATAL) |Exception|Caused by/.test(line)).slice(0, 8)
      return (errors.length > 0 ? `--- first errors in ${file} ---\n${errors.join('\n')}\n` : '') +
        `--- last lines of ${file} ---\n` + all.slice(-lines).join('\n')
    }
    return '(the broker wrote no log)'
  }

  /** Throws the start-up failure; `portInUse` tells callers that picking other ports may help. */
  private async exitedDuringStartup (): Promise<never> {
    const tail = await this.logTail()
    const error = new LocalKafkaError(`cluster "${this.options.name}": the broker exited during start-up\n${tail}`)
    if (/BindException|Address already in use/.test(tail)) (error as LocalKafkaError & { portInUse?: boolean }).portInUse = true
    throw error
  }

  private async waitReady (pid: number): Promise<void> {
    const timeoutMs = this.options.startTimeoutMs ?? 90_000
    const deadline = Date.now() + timeoutMs
    while (!await portAnswers(this.options.port)) {
      if (!isAlive(pid)) await this.exitedDuringStartup()
      if (Date.now() > deadline) {
        throw new LocalKafkaError(`cluster "${this.options.name}": port ${this.options.port} did not open within ${timeoutMs} ms\n${await this.logTail()}`)
      }
      await sleep(200)
    }
    const admin = createKafkaClient(this.connection()).admin()
    try {
      for (;;) {
        try {
          await admin.connect()
          const cluster = await admin.describeCluster()
          if (cluster.brokers.length > 0) return
        } catch (error) {
          if (!isAlive(pid)) await this.exitedDuringStartup()
          if (Date.now() > deadline) {
            throw new LocalKafkaError(
              `cluster "${this.options.name}": no admin answer within ${timeoutMs} ms (${(error as Error).message})\n${await this.logTail()}`
            )
          }
        }
        await sleep(200)
      }
    } finally {
      await admin.disconnect()
    }
  }
}

/** A port p such that p and p + 1 (the controller) are free on 127.0.0.1, from `from` upwards. */
export async function freePortPair (from: number, to = from + 500): Promise<number> {
  for (let port = from; port < to; port += 2) {
    if (!await portAnswers(port) && !await portAnswers(port + 1)) return port
  }
  throw new LocalKafkaError(`no two free ports between ${from} and ${to} on 127.0.0.1`)
}
