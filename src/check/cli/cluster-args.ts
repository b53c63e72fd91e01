import type { Argv } from 'yargs'
import { connectionFromProperties } from '../../config/client-properties.js'
import type { ClusterConnection } from '../../config/cluster-connection.js'
import type { PropertyEntry } from '../../config/java-properties.js'
import { readPropertiesFile } from '../../config/properties-file.js'
import { ProblemList } from '../../config/values.js'
import { AuditClient } from '../../kafka/audit-client.js'
import { ConfigError } from '../../shared/errors.js'
import { createLogger } from '../../shared/logger.js'
import { UsageError } from './exit-codes.js'

const OutputFormats = ['table', 'json', 'csv'] as const
export type OutputFormat = typeof OutputFormats[number]

/** Options every command takes. */
export interface CommonArgs {
  format: OutputFormat
  /** With --format csv: keep the TOTAL rows. */
  totals?: boolean
  verbose: boolean
  'timeout-ms': number
}

export function withCommonArgs<T> (yargs: Argv<T>): Argv<T & CommonArgs> {
  return yargs
    .option('format', { choices: OutputFormats, default: 'table' as OutputFormat, describe: 'Output: an aligned table, JSON, or CSV.' })
    .option('totals', { type: 'boolean', default: false, describe: 'With --format csv: the TOTAL rows too (CSV holds data rows only without it).' })
    .option('verbose', { type: 'boolean', default: false, describe: 'Log client activity on stderr and show stack traces.' })
    .option('timeout-ms', {
      type: 'string',
      default: '3000',
      coerce: positiveInteger('--timeout-ms'),
      describe: 'Connection timeout per broker; an unreachable cluster fails after about twice this.',
    }) as Argv<T & CommonArgs>
}

/** A coercion that accepts only integers >= `min`, with a message naming the flag. */
export function positiveInteger (flag: string, min = 1) {
  return (value: unknown): number => {
    const text = String(value)
    if (Array.isArray(value)) throw new UsageError(`${flag} was given more than once; give it once`)
    if (!/^\d+$/.test(text.trim()) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
      throw new UsageError(`${flag} "${text}": expected ${min === 0 ? 'a non-negative' : 'a positive'} integer`)
    }
    return Number(text)
  }
}

/** Like `positiveInteger` but allows a fraction (seconds). */
export function nonNegativeNumber (flag: string) {
  return (value: unknown): number => {
    const text = String(value)
    if (Array.isArray(value)) throw new UsageError(`${flag} was given more than once; give it once`)
    const n = Number(text)
    if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`${flag} "${text}": expected a non-negative number of seconds`)
    return n
  }
}

/** Builds a connection from a bootstrap flag plus an optional Java client properties file (`--command-config`), as Kafka's tools do. */
export function clusterConnection (options: {
  alias: string
  bootstrap: string | undefined
  bootstrapFlag: string
  configFile: string | undefined
  configFlag: string
}): ClusterConnection {
  const properties = new Map<string, PropertyEntry>(options.configFile === undefined ? [] : readPropertiesFile(options.configFile, options.configFlag))
  if (options.bootstrap !== undefined) properties.set('bootstrap.servers', { value: options.bootstrap, file: options.bootstrapFlag, line: 0 })
  const problems = new ProblemList()
  const connection = connectionFromProperties(
    properties,
    {
      alias: options.alias,
      where: options.configFile === undefined ? '' : `${options.configFile}: `,
      bootstrapHint: `with ${options.bootstrapFlag}`,
      defaultClientId: 'mirror-check',
    },
    problems
  )
  if (!problems.empty || connection === undefined) {
    // The bootstrap value came from the flag: name the flag, not the properties key.
    throw new ConfigError(
      problems.problems.map(p => (p.key.endsWith('bootstrap.servers') && options.bootstrap !== undefined ? { ...p, key: options.bootstrapFlag } : p))
    )
  }
  return connection
}

/** The two clusters of lag, verify and translate: bootstrap flags, each defaulting to its properties file. */
export interface ClusterPairArgs {
  source?: string
  target?: string
  'source-command-config'?: string
  'target-command-config'?: string
}

export function withClusterPairArgs<T> (yargs: Argv<T>): Argv<T & ClusterPairArgs> {
  return yargs
    .option('source', { type: 'string', describe: 'Source cluster brokers (host:port,...); default: bootstrap.servers in --source-command-config.' })
    .option('target', { type: 'string', describe: 'Target cluster brokers; default: bootstrap.servers in --target-command-config.' })
    .option('source-command-config', { type: 'string', describe: 'Java client .properties for the source cluster (security settings included).' })
    .option('target-command-config', { type: 'string', describe: 'Java client .properties for the target cluster.' }) as Argv<T & ClusterPairArgs>
}

/** Both connections of a `ClusterPairArgs` command; a bad flag or file throws before anything connects. */
export function clusterPair (args: ClusterPairArgs): { source: ClusterConnection, target: ClusterConnection } {
  return {
    source: clusterConnection({
      alias: 'source',
      bootstrap: args.source,
      bootstrapFlag: '--source',
      configFile: args['source-command-config'],
      configFlag: '--source-command-config',
    }),
    target: clusterConnection({
      alias: 'target',
      bootstrap: args.target,
      bootstrapFlag: '--target',
      configFile: args['target-command-config'],
      configFlag: '--target-command-config',
    }),
  }
}

/** A connected audit client for `connection`; closed by the caller. */
export async function connectClient (connection: ClusterConnection, args: CommonArgs): Promise<AuditClient> {
  const client = new AuditClient(connection, {
    connectionTimeoutMs: args['timeout-ms'],
    retries: 1,
    ...(args.verbose ? { logger: createLogger({ level: 'debug' }) } : {}),
  })
  try {
    await client.connect()
  } catch (error) {
    await client.close()
    throw error
  }
  return client
}
