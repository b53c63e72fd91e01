import { normaliseJavaValue, PRINT_CONFIG_KIND, type ConfigBlock } from './resolved-config.js'

/** Where a contender prints the value one passed setting resolved to. */
export type Printed =
  /** In every block of this kind (whose `client.id` matches, when given), under `key`; at least one such block must be there. */
  | { readonly block: string, readonly key: string, readonly clientId?: RegExp }
  /** The number of blocks of this kind (whose `client.id` matches): one per consumer thread, say. */
  | { readonly countOf: string, readonly clientId?: RegExp }
  /** Not printed: why, for the report. */
  | { readonly unchecked: string }

/** One setting the bench gave a contender, and where to read what it resolved to. */
export interface ExpectedSetting {
  /** The key as the bench passed it (`linger.ms`, `--num.streams`, `<alias>.offset.flush.interval.ms`). */
  readonly key: string
  /** The value as passed. */
  readonly passed: string
  /** The value the tool prints when the setting took effect, when it prints it in another form (`acks=all` prints `-1`); default `passed`. */
  readonly expected?: string
  readonly printed: Printed
}

/** What one setting resolved to. */
export interface SettingOutcome {
  readonly key: string
  readonly passed: string
  readonly status: 'ok' | 'mismatch' | 'unchecked'
  /** What the tool printed (`(absent)` when a block lacks the key, `(no <kind> block)` when no block was printed); the reason when unchecked. */
  readonly resolved: string
  /** Where it was read: `ProducerConfig`, `DistributedConfig`, `print-config`. */
  readonly where: string
}

/** Every setting the bench passed one contender run, checked against what it printed. */
export interface SettingsCheck {
  readonly contender: string
  /** The file the resolved values came from (a log, or the `--print-config` output). */
  readonly file: string
  readonly outcomes: readonly SettingOutcome[]
}

const matchesClient = (block: ConfigBlock, clientId: RegExp | undefined): boolean =>
  clientId === undefined || clientId.test(block.values.get('client.id') ?? '')

const describeBlock = (kind: string, clientId: RegExp | undefined): string =>
  clientId === undefined ? kind : `${kind} of client.id ${clientId.source}`

function printedValue (block: ConfigBlock, key: string): string | undefined {
  const raw = block.values.get(key)
  if (raw === undefined) return undefined
  return block.kind === PRINT_CONFIG_KIND ? raw : normaliseJavaValue(raw)
}

/** Compares one setting with every printed block it should appear in. */
export function checkSetting (setting: ExpectedSetting, blocks: readonly ConfigBlock[]): SettingOutcome {
  const { key, passed, printed } = setting
  if ('unchecked' in printed) return { key, passed, status: 'unchecked', resolved: printed.unchecked, where: 'not printed' }
  const expected = setting.expected ?? passed
  if ('countOf' in printed) {
    const count = String(blocks.filter(block => block.kind === printed.countOf && matchesClient(block, printed.clientId)).length)
    const where = `${describeBlock(printed.countOf, printed.clientId)} blocks`
    return { key, passed, status: count === expected ? 'ok' : 'mismatch', resolved: count, where }
  }
  const where = describeBlock(printed.block, printed.clientId)
  const relevant = blocks.filter(block => block.kind === printed.block && matchesClient(block, printed.clientId))
  if (relevant.length === 0) return { key, passed, status: 'mismatch', resolved: `(no ${where} block)`, where }
  const values = [...new Set(relevant.map(block => printedValue(block, printed.key) ?? '(absent)'))]
  const ok = values.length === 1 && values[0] === expected
  return { key, passed, status: ok ? 'ok' : 'mismatch', resolved: values.join(' / '), where: printed.key === key ? where : `${where} ${printed.key}` }
}

/** Checks every expected setting of one contender run. */
export function checkSettings (contender: string, file: string, expected: readonly ExpectedSetting[], blocks: readonly ConfigBlock[]): SettingsCheck {
  return { contender, file, outcomes: expected.map(setting => checkSetting(setting, blocks)) }
}

/** One line per setting that did not take effect: `mm2: offset.flush.interval.ms passed 5000, resolved 60000 (DistributedConfig in .../mm2.log)`. */
export function mismatchLines (check: SettingsCheck): string[] {
  return check.outcomes.filter(outcome => outcome.status === 'mismatch')
    .map(outcome => `${check.contender}: ${outcome.key} passed ${outcome.passed}, resolved ${outcome.resolved} (${outcome.where} in ${check.file})`)
}

/** Thrown when a passed setting did not take effect: the message has one line per such setting. */
export class SettingsMismatchError extends Error {
  override readonly name = 'SettingsMismatchError'
  constructor (readonly check: SettingsCheck) {
    super(mismatchLines(check).join('\n'))
  }
}

/** The check's outcome, or a `SettingsMismatchError` when any setting did not take effect. */
export function requireSettings (check: SettingsCheck): SettingsCheck {
  if (check.outcomes.some(outcome => outcome.status === 'mismatch')) throw new SettingsMismatchError(check)
  return check
}
