import type { ConfigProblem } from '../shared/errors.js'
import { redactUrl } from '../shared/redact-url.js'

/** What a secret looks like wherever it is shown. */
export const REDACTED = '[redacted]'

/** Keys whose values are secrets: passwords, JAAS lines and private key material. */
function isSecretKey (key: string): boolean {
  return /(password|secret|jaas\.config|keystore\.key|ssl\.key|credentials?|token)$/i.test(key.trim())
}

/** Keys whose values are URLs, which may hold user-info or query secrets: shown as `redactUrl` shows them. */
function isUrlKey (key: string): boolean {
  return /(\.url|uri|endpoint)$/i.test(key.trim())
}

/**
 * Collects problems while reading configuration so all of them are reported at once, and the keys
 * that were read but have no effect here (reported together as one warning line).
 */
export class ProblemList {
  readonly problems: ConfigProblem[] = []
  readonly #ignored = new Set<string>()
  /**
   * Records a problem; the value of a secret key (password, JAAS line, key material) is shown as
   * `[redacted]`, that of a URL key without user-info and query.
   */
  add (key: string, value: string | undefined, message: string): void {
    const secret = value !== undefined && isSecretKey(key) && !/^\$\{[^}]*\}$/.test(value.trim())
    const shown = secret ? REDACTED : value !== undefined && isUrlKey(key) ? redactUrl(value) : value
    this.problems.push(shown === undefined ? { key, message } : { key, value: shown, message })
  }

  /** Records a key that is accepted but does nothing in the sidecar (a MirrorMaker or Java client internal). */
  ignore (key: string): void { this.#ignored.add(key) }
  get ignored (): string[] { return [...this.#ignored].sort() }
  get empty (): boolean { return this.problems.length === 0 }
}

export interface IntegerRule {
  readonly min?: number
  readonly max?: number
  /** What to say the value must be, e.g. "a positive integer". */
  readonly expected?: string
}

/** Parses a base-10 integer within bounds; records a problem naming `key` and returns undefined when it is not one. */
export function parseInteger (key: string, raw: string | undefined, rule: IntegerRule, problems: ProblemList): number | undefined {
  if (raw === undefined) return undefined
  const trimmed = raw.trim()
  const min = rule.min ?? Number.MIN_SAFE_INTEGER
  const max = rule.max ?? Number.MAX_SAFE_INTEGER
  const expected =
    rule.expected ??
    (min === 1 && max === Number.MAX_SAFE_INTEGER
      ? 'a positive integer'
      : min === 0 && max === Number.MAX_SAFE_INTEGER
        ? 'a non-negative integer'
        : `an integer from ${min} to ${max}`)
  if (!/^-?\d+$/.test(trimmed)) {
    problems.add(key, raw, `expected ${expected}`)
    return undefined
  }
  const value = Number(trimmed)
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    problems.add(key, raw, `expected ${expected}`)
    return undefined
  }
  return value
}

/** Parses `true`/`false` (any case), as Java's `Boolean.parseBoolean` users write them. */
export function parseBoolean (key: string, raw: string | undefined, problems: ProblemList): boolean | undefined {
  if (raw === undefined) return undefined
  const lower = raw.trim().toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  problems.add(key, raw, 'expected true or false')
  return undefined
}

/** Parses one of `choices` (case-insensitive); returns the canonical choice. */
export function parseChoice<T extends string> (key: string, raw: string | undefined, choices: readonly T[], problems: ProblemList): T | undefined {
  if (raw === undefined) return undefined
  const found = choices.find(choice => choice.toLowerCase() === raw.trim().toLowerCase())
  if (found === undefined) problems.add(key, raw, `expected one of ${choices.join(', ')}`)
  return found
}

/** Splits `host:port,host:port` and checks each part. */
export function parseBootstrapServers (key: string, raw: string | undefined, problems: ProblemList): string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  const servers = raw.split(',').map(s => s.trim()).filter(s => s !== '')
  const bad = servers.filter(s => !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$/.test(s.replace(/^[A-Z_]+:\/\//, '')))
  if (bad.length > 0 || servers.length === 0) {
    problems.add(key, raw, 'expected host:port[,host:port...]')
    return undefined
  }
  return servers.map(s => s.replace(/^[A-Z_]+:\/\//, ''))
}
