import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { KafkaDistribution } from '../scripts/local-kafka/kafka-distribution.js'
import { spawnJavaMain } from '../scripts/local-kafka/java-main.js'
import type { Compression } from './bench-options.js'
import { stopChild, track } from './child-registry.js'
import { UsageSampler } from './process-usage.js'

/** What Kafka's own tools reach on these brokers: a mirror can be no faster than the slower one. */
export interface CeilingFigures {
  readonly run: number
  readonly records: number
  /** ProducerPerformance into a fresh target topic, as it reports (excludes JVM start). */
  readonly producerRecordsPerSecond: number
  readonly producerMbPerSecond: number
  readonly producerCpuSeconds: number
  readonly producerPeakRssBytes: number
  /** ConsumerPerformance reading the preloaded source topic (`fetch.nMsg.sec`: excludes group join). */
  readonly consumerRecordsPerSecond: number
  readonly consumerMbPerSecond: number
  readonly consumerCpuSeconds: number
  readonly consumerPeakRssBytes: number
}

/** Producer settings of the ceiling run, stated in the results. */
export const CEILING_PRODUCER_PROPS = { acks: 'all', 'batch.size': '262144', 'linger.ms': '10' } as const

interface ToolRun { output: string, cpuSeconds: number, peakRssBytes: number }

async function runTool (
  distribution: KafkaDistribution,
  mainClass: string,
  args: string[],
  heap: string,
  workDir: string,
  name: string,
  timeoutMs: number
): Promise<ToolRun> {
  await mkdir(workDir, { recursive: true })
  const stdoutFile = join(workDir, `${name}.out`)
  const child = track(
    name,
    await spawnJavaMain({
      distribution,
      mainClass,
      args,
      maxHeap: heap,
      loggingConfigFile: join(workDir, `${name}-log4j2.properties`),
      logFile: join(workDir, `${name}.log`),
      logLevel: 'WARN',
      stdoutFile,
    })
  )
  const sampler = new UsageSampler(child.pid, 100)
  sampler.start()
  const timer = setTimeout(() => {
    void stopChild(child, 1_000)
  }, timeoutMs)
  try {
    const { code } = await child.exited
    const output = await readFile(stdoutFile, 'utf8')
    if (code !== 0) throw new Error(`${mainClass} exited with ${code}:\n${output.trim().split('\n').slice(-10).join('\n')}`)
    const usage = sampler.latest
    return { output, cpuSeconds: usage?.cpuSeconds ?? Number.NaN, peakRssBytes: usage?.peakRssBytes ?? Number.NaN }
  } finally {
    clearTimeout(timer)
    sampler.stop()
  }
}

/** `N records sent, R records/sec (M MB/sec), ...` - the final line of ProducerPerformance. */
export function parseProducerPerformance (output: string): { recordsPerSecond: number, mbPerSecond: number } {
  const matches = [...output.matchAll(/(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\)/g)]
  const last = matches.at(-1)
  if (last === undefined) throw new Error(`ProducerPerformance printed no summary:\n${output.slice(-2000)}`)
  return { recordsPerSecond: Number(last[2]), mbPerSecond: Number(last[3]) }
}

/** The header and data line of ConsumerPerformance, by column name. */
export function parseConsumerPerformance (output: string): { recordsPerSecond: number, mbPerSecond: number } {
  const lines = output.split('\n').map(line => line.trim()).filter(line => line !== '')
  const headerIndex = lines.findIndex(line => line.startsWith('start.time'))
  const header = lines[headerIndex]?.split(',').map(cell => cell.trim())
  const data = lines[headerIndex + 1]?.split(',').map(cell => cell.trim())
  if (header === undefined || data === undefined) throw new Error(`ConsumerPerformance printed no result:\n${output.slice(-2000)}`)
  const column = (name: string): number => Number(data[header.indexOf(name)])
  return { recordsPerSecond: column('fetch.nMsg.sec'), mbPerSecond: column('fetch.MB.sec') }
}

export interface CeilingJob {
  readonly distribution: KafkaDistribution
  readonly sourceBootstrap: string
  readonly targetBootstrap: string
  readonly sourceTopic: string
  /** An empty target topic with as many partitions as the source. */
  readonly targetTopic: string
  readonly records: number
  readonly recordBytes: number
  readonly compression: Compression
  /** `--producer-prop` settings, applied over `CEILING_PRODUCER_PROPS`. */
  readonly producerProps: Readonly<Record<string, string>>
  readonly heap: string
  readonly tag: string
  readonly workDir: string
  readonly timeoutMs: number
}

/** Runs ConsumerPerformance on the source, then ProducerPerformance into the target (never both at once). */
export async function runCeiling (job: CeilingJob, run: number): Promise<CeilingFigures> {
  const consumer = await runTool(job.distribution, 'org.apache.kafka.tools.ConsumerPerformance', [
    '--bootstrap-server', job.sourceBootstrap, '--topic', job.sourceTopic, '--messages', String(job.records),
    '--group', `bench-ceiling-${job.tag}`, '--timeout', '60000',
  ], job.heap, job.workDir, 'consumer-performance', job.timeoutMs)
  const producer = await runTool(job.distribution, 'org.apache.kafka.tools.ProducerPerformance', [
    '--topic', job.targetTopic, '--num-records', String(job.records), '--record-size', String(job.recordBytes), '--throughput', '-1',
    '--producer-props', `bootstrap.servers=${job.targetBootstrap}`, `compression.type=${job.compression}`,
    ...Object.entries({ ...CEILING_PRODUCER_PROPS, ...job.producerProps }).map(([key, value]) => `${key}=${value}`),
  ], job.heap, job.workDir, 'producer-performance', job.timeoutMs)
  const produced = parseProducerPerformance(producer.output)
  const consumed = parseConsumerPerformance(consumer.output)
  return {
    run,
    records: job.records,
    producerRecordsPerSecond: produced.recordsPerSecond,
    producerMbPerSecond: produced.mbPerSecond,
    producerCpuSeconds: producer.cpuSeconds,
    producerPeakRssBytes: producer.peakRssBytes,
    consumerRecordsPerSecond: consumed.recordsPerSecond,
    consumerMbPerSecond: consumed.mbPerSecond,
    consumerCpuSeconds: consumer.cpuSeconds,
    consumerPeakRssBytes: consumer.peakRssBytes,
  }
}
