import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { KafkaEndpoint } from '../../scripts/local-kafka/clusters.js'
import type { KeyedRecord } from './copy-comparison.js'

const execFileAsync = promisify(execFile)

/**
 * Every record of `topic` as kcat (librdkafka, independent of the mirror's client) reads it, from
 * the beginning to the end, with read_committed: records of aborted or open transactions are not
 * seen. Each partition's records come in log order.
 */
export async function readKeys (cluster: KafkaEndpoint, topic: string): Promise<KeyedRecord[]> {
  const { stdout } = await execFileAsync(
    'kcat',
    ['-C', '-b', cluster.bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%p|%k\n'],
    { maxBuffer: 256 * 1024 * 1024, timeout: 120_000 }
  )
  return stdout.split('\n').filter(line => line !== '').map(line => {
    const bar = line.indexOf('|')
    return { partition: Number(line.slice(0, bar)), key: line.slice(bar + 1) }
  })
}
