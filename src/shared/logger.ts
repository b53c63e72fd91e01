import { redactUrlsIn } from './redact-url.js'

/** Log levels in increasing severity; `silent` turns logging off. */
export const LogLevels = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = typeof LogLevels[number]

export type LogFields = Record<string, unknown>

/** Structured JSON logger: one object per line on stderr (stdout stays free for command output). */
export interface Logger {
  debug: (message: string, fields?: LogFields) => void
  info: (message: string, fields?: LogFields) => void
  warn: (message: string, fields?: LogFields) => void
  error: (message: string, fields?: LogFields) => void
  child: (fields: LogFields) => Logger
  readonly level: LogLevel
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

function errorFields (value: unknown): unknown {
  if (!(value instanceof Error)) return value
  const fields: LogFields = { type: value.name, message: value.message }
  const code = (value as { code?: unknown }).code
  if (code !== undefined) fields.code = code
  if (value.cause !== undefined) fields.cause = errorFields(value.cause)
  return fields
}

export interface LoggerOptions {
  /** Minimum level written; default `info`. */
  level?: LogLevel
  /** Where lines go; default `process.stderr.write`. */
  write?: (line: string) => void
  /** Fields added to every line. */
  bindings?: LogFields
}

export function createLogger (options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info'
  const write = options.write ?? ((line: string) => { process.stderr.write(line) })
  const bindings = options.bindings ?? {}
  const log = (at: Exclude<LogLevel, 'silent'>) => (message: string, fields?: LogFields): void => {
    if (rank[at] < rank[level]) return
    const line: LogFields = { time: new Date().toISOString(), level: at, msg: message, ...bindings }
    if (fields !== undefined) for (const [key, value] of Object.entries(fields)) line[key] = errorFields(value)
    // Every string, error messages too, with its URLs cut to scheme, host and path: no user-info or query secret in a log line.
    const shown = (_key: string, value: unknown): unknown =>
      typeof value === 'bigint' ? value.toString() : typeof value === 'string' ? redactUrlsIn(value) : value
    write(JSON.stringify(line, shown) + '\n')
  }
  return {
    level,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: fields => createLogger({ level, write, bindings: { ...bindings, ...fields } }),
  }
}

export const silentLogger: Logger = createLogger({ level: 'silent' })
