/**
 * The configuration a contender resolved, read from what it prints: Kafka's Java clients and
 * Connect log every config object they build as a `<Name>Config values:` block (one `key = value`
 * line per setting, tab-indented); the sidecar prints its resolved configuration as JSON with
 * `--print-config`. Pure parsing, no I/O.
 */

/** One printed config object: `ProducerConfig`, `ConsumerConfig`, `DistributedConfig`, ... or `print-config`. */
export interface ConfigBlock {
  readonly kind: string
  /** Every printed setting, its value as printed (Java) or flattened (JSON). */
  readonly values: ReadonlyMap<string, string>
}

/** The kind the sidecar's `--print-config` JSON gets as a block. */
export const PRINT_CONFIG_KIND = 'print-config'

const BLOCK_START = /\] INFO (\w+) values: ?$/
const SETTING = /^\t([^\s=]+) = ?(.*)$/

/**
 * Every `<Name>Config values:` block of a Kafka log (log4j or log4j2 with the `[%d] %p %m (%c)%n`
 * layout), in log order. A block ends at the first line that is not a tab-indented setting.
 */
export function parseConfigBlocks (log: string): ConfigBlock[] {
  const blocks: ConfigBlock[] = []
  let current: { kind: string, values: Map<string, string> } | undefined
  for (const line of log.split(/\r?\n/)) {
    if (current !== undefined) {
      const setting = SETTING.exec(line)
      if (setting !== null) {
        current.values.set(setting[1] as string, (setting[2] as string).trimEnd())
        continue
      }
      blocks.push(current)
      current = undefined
    }
    const start = BLOCK_START.exec(line)
    if (start !== null) current = { kind: start[1] as string, values: new Map() }
  }
  if (current !== undefined) blocks.push(current)
  return blocks
}

/**
 * A value as Java prints it, in the form the bench passes it: `class a.B` is `a.B`, a list
 * `[a, b]` is `a,b`, `null` and an empty value stay as they are.
 */
export function normaliseJavaValue (printed: string): string {
  const value = printed.trim()
  if (value.startsWith('class ')) return value.slice('class '.length)
  if (value.startsWith('[') && value.endsWith(']')) return value.slice(1, -1).split(',').map(item => item.trim()).filter(item => item !== '').join(',')
  return value
}

/**
 * The sidecar's `--print-config` JSON as one block: nested keys joined with dots
 * (`flows.0.producer.batchSizeBytes`); an array also as one value, its items joined with commas
 * (`flows.0.source.brokers`).
 */
export function printConfigBlock (json: string): ConfigBlock {
  const values = new Map<string, string>()
  const visit = (value: unknown, key: string): void => {
    if (Array.isArray(value)) {
      if (value.every(item => item === null || typeof item !== 'object')) values.set(key, value.map(String).join(','))
      value.forEach((item, index) => { visit(item, `${key}.${index}`) })
    } else if (value !== null && typeof value === 'object') {
      for (const [name, inner] of Object.entries(value)) visit(inner, key === '' ? name : `${key}.${name}`)
    } else {
      values.set(key, String(value))
    }
  }
  visit(JSON.parse(json) as unknown, '')
  return { kind: PRINT_CONFIG_KIND, values }
}
