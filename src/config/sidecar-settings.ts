import { LogLevels, type LogLevel } from '../shared/logger.js'
import { FLAG_DEFAULTS } from './flag-defaults.js'
import type { MirrorConfig } from './mirror-config.js'
import { parseBoolean, parseChoice, parseInteger, type ProblemList } from './values.js'

/** The process-wide settings of `MirrorConfig` (everything but the flows), from sidecar flags. */
export type SidecarSettings = Pick<MirrorConfig, 'metricsPort' | 'metricsHost' | 'logLevel' | 'drainTimeoutMs' | 'metricsPartitionLabels' | 'idleGc'>

/** Flags that apply in mm2.properties mode too: the HTTP server, logging and shutdown. */
export const SIDECAR_FLAGS = ['metrics.port', 'metrics.host', 'log.level', 'drain.timeout.ms', 'metrics.partition.labels', 'idle.gc'] as const
export type SidecarFlag = typeof SIDECAR_FLAGS[number]

function single (flag: SidecarFlag, raw: unknown, problems: ProblemList): string | undefined {
  if (raw === undefined || typeof raw === 'boolean') return undefined
  if (Array.isArray(raw)) {
    if (raw.length > 1) problems.add(`--${flag}`, raw.join(' '), 'given more than once; give it once')
    return raw[raw.length - 1] as string
  }
  return String(raw)
}

/** Parses the sidecar flags with the same rules and defaults as the MirrorMaker 1 command line. */
export function sidecarSettingsFromFlags (values: Partial<Record<SidecarFlag, unknown>>, problems: ProblemList): SidecarSettings {
  const metricsPort =
    parseInteger(
      '--metrics.port',
      single('metrics.port', values['metrics.port'], problems),
      { min: 0, max: 65535, expected: 'a port number from 0 to 65535' },
      problems
    ) ?? FLAG_DEFAULTS['metrics.port']
  const drainTimeoutMs =
    parseInteger('--drain.timeout.ms', single('drain.timeout.ms', values['drain.timeout.ms'], problems), { min: 0 }, problems) ??
    FLAG_DEFAULTS['drain.timeout.ms']
  const logLevel: LogLevel = parseChoice('--log.level', single('log.level', values['log.level'], problems), LogLevels, problems) ?? FLAG_DEFAULTS['log.level']
  // Left undefined when not given, so an mm2.properties file can set it.
  const metricsPartitionLabels = parseBoolean(
    '--metrics.partition.labels',
    single('metrics.partition.labels', values['metrics.partition.labels'], problems),
    problems
  )
  const idleGc = parseBoolean('--idle.gc', single('idle.gc', values['idle.gc'], problems), problems)
  return {
    metricsPort,
    metricsHost: single('metrics.host', values['metrics.host'], problems) ?? FLAG_DEFAULTS['metrics.host'],
    logLevel,
    drainTimeoutMs,
    ...(metricsPartitionLabels === undefined ? {} : { metricsPartitionLabels }),
    ...(idleGc === undefined ? {} : { idleGc }),
  }
}
