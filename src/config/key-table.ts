import { parseBoolean, parseChoice, parseInteger, type ProblemList } from './values.js'

/** How a key's value is read: `integer`, `number`, `boolean` and `choice` are parsed and checked here; `text` is taken as written. */
export type KeyType = 'integer' | 'number' | 'boolean' | 'choice' | 'text'

/** A key's value once read: what the file says, else the row's default. */
export type KeyValue = number | boolean | string | undefined

/**
 * One configuration key: its name, how its value is read, its default, the check of its resolved
 * value and what the docs say of it. A new key of a family is one row of the family's table.
 */
export interface KeyRow {
  readonly key: string
  readonly type: KeyType
  /** The value when the key is not set (or not valid, the problem being reported); none: the key stays unset. */
  readonly default?: number | boolean | string
  /** The default as the docs show it, where it is not the plain value (a computed or per-flow default). */
  readonly defaultText?: string
  /** Bounds of an `integer`; `expected` words them in the message ("a positive integer" by default for min 1). */
  readonly min?: number
  readonly max?: number
  readonly expected?: string
  /** The values of a `choice` (matched without regard to case; the message lists them). */
  readonly choices?: readonly string[]
  /**
   * Refuses a resolved value: the message of the problem, or undefined. Runs on every read, set or not,
   * after the value parsed and with the values of the rows above it (so a bound may name another key).
   */
  readonly check?: (value: KeyValue, earlier: KeyValues) => string | undefined
  /** The problem of `check` shows the value as written (else the resolved value; `text` rows always show it as written). */
  readonly checkShowsRaw?: boolean
  /** Set when another parser reads the key (it is listed and documented here, not read by `readKeys`). */
  readonly readBy?: string
  /** What the key does, one line for the docs' key tables. */
  readonly doc: string
}

/** Where `readKeys` finds a key's value and how a message names the key (with its file or prefix). */
export interface KeySource {
  /** The value and the full name of the key it came from, or undefined when the key is not set. */
  readonly get: (key: string) => { readonly key: string, readonly value: string } | undefined
  /** The full name of a key that is not set, for a problem about its default. */
  readonly name: (key: string) => string
}

/** The JavaScript type of a value of each key type. */
const VALUE_TYPES: Record<KeyType, 'number' | 'boolean' | 'string'> = {
  integer: 'number',
  number: 'number',
  boolean: 'boolean',
  choice: 'string',
  text: 'string',
}

/** True when `value` is of the JavaScript type `type`. */
function isOfType (value: KeyValue, type: 'number' | 'boolean' | 'string'): boolean {
  const actual = typeof value
  return actual === type
}

/**
 * The values `readKeys` resolved, by key: typed getters that fail loudly on a row of another type.
 *
 * Invariant A: every key held is the key of a row that was read, and its value is undefined or of
 * its row's type (a number for `integer` and `number`, a boolean for `boolean`, a string for
 * `choice` and `text`; a `choice` value is one of the row's choices). `set` keeps it; `checkInvariants` asserts it.
 */
export class KeyValues {
  readonly #values = new Map<string, KeyValue>()
  readonly #rows = new Map<string, KeyRow>()

  set (row: KeyRow, value: KeyValue): void {
    // Invariant A: a value of another type than its row's is a bug of the parser, not of the configuration.
    if (value !== undefined && !isOfType(value, VALUE_TYPES[row.type])) throw new Error(`${row.key}: a ${typeof value} for a ${row.type} key`)
    this.#rows.set(row.key, row)
    this.#values.set(row.key, value)
  }

  /** Asserts Invariant A. */
  checkInvariants (): void {
    for (const [key, value] of this.#values) {
      const row = this.#rows.get(key)
      if (row === undefined || row.key !== key) throw new Error(`Invariant A: ${key} has no row`)
      if (value === undefined) continue
      if (!isOfType(value, VALUE_TYPES[row.type])) throw new Error(`Invariant A: ${key} holds a ${typeof value}, its row is ${row.type}`)
      if (row.type === 'choice' && !(row.choices ?? []).includes(value as string)) throw new Error(`Invariant A: ${key} holds ${String(value)}, not a choice`)
    }
  }

  number (key: string): number {
    const value = this.optionalNumber(key)
    if (value === undefined) throw new Error(`${key} has no number value and no default`)
    return value
  }

  optionalNumber (key: string): number | undefined { return this.#typed(key, 'number') as number | undefined }

  boolean (key: string): boolean {
    const value = this.#typed(key, 'boolean') as boolean | undefined
    if (value === undefined) throw new Error(`${key} has no boolean value and no default`)
    return value
  }

  optionalBoolean (key: string): boolean | undefined { return this.#typed(key, 'boolean') as boolean | undefined }

  text (key: string): string | undefined { return this.#typed(key, 'string') as string | undefined }

  #typed (key: string, type: 'number' | 'boolean' | 'string'): KeyValue {
    if (!this.#values.has(key)) throw new Error(`${key} is not a key of the table read`)
    const value = this.#values.get(key)
    if (value !== undefined && !isOfType(value, type)) throw new Error(`${key} holds a ${typeof value}, not a ${type}`)
    return value
  }
}

/** Parses a decimal number within the row's bounds (a fraction such as 0.8); the message names the default. */
function parseNumber (row: KeyRow, key: string, raw: string | undefined, problems: ProblemList): number | undefined {
  if (raw === undefined) return undefined
  const value = Number(raw.trim())
  const min = row.min ?? -Number.MAX_VALUE
  const max = row.max ?? Number.MAX_VALUE
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    problems.add(key, raw, `expected a number from ${min} to ${max} (default ${String(row.default)})`)
    return undefined
  }
  return value
}

/** Parses one value by its row's type; a problem names `key` when it does not parse. */
function parseValue (row: KeyRow, key: string, raw: string | undefined, problems: ProblemList): KeyValue {
  switch (row.type) {
    case 'integer': {
      const rule = { ...(row.min === undefined ? {} : { min: row.min }), ...(row.max === undefined ? {} : { max: row.max }) }
      return parseInteger(key, raw, row.expected === undefined ? rule : { ...rule, expected: row.expected }, problems)
    }
    case 'number': return parseNumber(row, key, raw, problems)
    case 'boolean': return parseBoolean(key, raw, problems)
    case 'choice': return parseChoice(key, raw, row.choices ?? [], problems)
    case 'text': return raw
  }
}

/** The rows of `table` named in `keys`, in the order of `keys` (a parser reads a table's keys where its own order needs them). */
export function rowsOf (table: readonly KeyRow[], keys: readonly string[]): KeyRow[] {
  return keys.map(key => {
    const row = table.find(candidate => candidate.key === key)
    if (row === undefined) throw new Error(`${key} is not a row of the table`)
    return row
  })
}

/**
 * Reads the keys of `table` in its order from `source`: each value parsed by its row's type, its
 * default when unset or not valid, then the row's check. Rows another parser reads are skipped.
 */
export function readKeys (table: readonly KeyRow[], source: KeySource, problems: ProblemList): KeyValues {
  const values = new KeyValues()
  for (const row of table) {
    if (row.readBy !== undefined) continue
    const entry = source.get(row.key)
    const parsed = parseValue(row, entry?.key ?? source.name(row.key), entry?.value, problems)
    const value = parsed ?? row.default
    const message = row.check?.(value, values)
    const shown = row.type === 'text' || row.checkShowsRaw === true ? entry?.value : valueText(value)
    if (message !== undefined) problems.add(entry?.key ?? source.name(row.key), shown, message)
    values.set(row, value)
  }
  return values
}

function valueText (value: KeyValue): string | undefined {
  return value === undefined ? undefined : String(value)
}

/** The names of a table's keys. */
export function keyNames (table: readonly KeyRow[]): string[] {
  return table.map(row => row.key)
}
