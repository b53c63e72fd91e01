import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { LocalKafkaError, type KafkaDistribution } from './kafka-distribution.js'

/** How to run one Java main class from a fetched Kafka distribution. */
export interface JavaMainOptions {
  readonly distribution: KafkaDistribution
  /** Fully qualified class, e.g. `kafka.tools.MirrorMaker`. */
  readonly mainClass: string
  readonly args: readonly string[]
  /** Maximum heap (`-Xmx`), e.g. `1g`; required so every JVM's heap is stated. */
  readonly maxHeap: string
  /** The logging backend's config file is written here (log4j2 or reload4j, by distribution). */
  readonly loggingConfigFile: string
  /** Where the Kafka loggers write; stdout/stderr go to `stdoutFile` (or are piped when absent). */
  readonly logFile: string
  /** Root log level; default `INFO`. */
  readonly logLevel?: 'INFO' | 'WARN' | 'ERROR'
  /** File receiving the process' stdout and stderr; when absent both are piped to the caller. */
  readonly stdoutFile?: string
  readonly extraJvmArgs?: readonly string[]
}

/** A logging config for `distribution`'s backend that writes every logger to `logFile`. */
export function javaLoggingConfig (distribution: KafkaDistribution, logFile: string, level = 'INFO'): string {
  if (distribution.logging === 'log4j2') {
    return [
      'status = warn',
      'appender.file.type = File',
      'appender.file.name = FILE',
      `appender.file.fileName = ${logFile}`,
      'appender.file.layout.type = PatternLayout',
      'appender.file.layout.pattern = [%d] %p %m (%c)%n',
      `rootLogger.level = ${level}`,
      'rootLogger.appenderRef.file.ref = FILE',
    ].join('\n') + '\n'
  }
  return [
    `log4j.rootLogger=${level}, file`,
    'log4j.appender.file=org.apache.log4j.FileAppender',
    `log4j.appender.file.File=${logFile}`,
    'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
  ].join('\n') + '\n'
}

/** The JVM flag that points `distribution`'s logging backend at `file`. */
export function javaLoggingArg (distribution: KafkaDistribution, file: string): string {
  return distribution.logging === 'log4j2'
    ? `-Dlog4j2.configurationFile=file:${file}`
    : `-Dlog4j.configuration=file:${file}`
}

/**
 * Starts `java <mainClass>` with the distribution's classpath, an explicit `-Xmx` and file logging.
 * The child is the JVM itself (no shell in between), so its pid can be sampled and signalled.
 */
export async function spawnJavaMain (options: JavaMainOptions): Promise<ChildProcess> {
  const { distribution } = options
  await writeFile(options.loggingConfigFile, javaLoggingConfig(distribution, options.logFile, options.logLevel))
  const out = options.stdoutFile === undefined ? undefined : openSync(options.stdoutFile, 'a')
  try {
    const child = spawn('java', [
      `-Xmx${options.maxHeap}`, '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
      javaLoggingArg(distribution, options.loggingConfigFile),
      ...(options.extraJvmArgs ?? []),
      '-cp', distribution.classpath, options.mainClass, ...options.args,
    ], { stdio: out === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', out, out] })
    if (child.pid === undefined) throw new LocalKafkaError(`java ${options.mainClass} did not start`)
    return child
  } finally {
    if (out !== undefined) closeSync(out)
  }
}
