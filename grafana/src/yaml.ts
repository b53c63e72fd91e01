/** JSON-like values the YAML writer accepts. */
export type YamlValue = string | number | boolean | null | readonly YamlValue[] | { readonly [key: string]: YamlValue | undefined }

/**
 * Block-style YAML for plain data, deterministic: keys in insertion order, scalars quoted as JSON
 * strings (a JSON string is a valid YAML double-quoted scalar), multi-line strings as `|-` blocks.
 * Enough for Prometheus rule and rule-test files; not a general YAML library.
 */
export function toYaml (value: unknown): string {
  return lines(value as YamlValue, 0).join('\n') + '\n'
}

function scalar (value: string | number | boolean | null): string {
  if (value === null) return 'null'
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw new Error(`cannot write a ${typeof value} as YAML`)
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`cannot write ${value} as YAML`)
  return String(value)
}

function isScalar (value: YamlValue): value is string | number | boolean | null {
  return value === null || typeof value !== 'object'
}

function isMultiline (value: YamlValue): value is string {
  return typeof value === 'string' && value.includes('\n') && !/[ \t]\n|\n[ \t]|^\s|\s$/.test(value)
}

function block (text: string, indent: number): string[] {
  const pad = ' '.repeat(indent)
  return text.split('\n').map(line => line === '' ? '' : pad + line)
}

function lines (value: YamlValue, indent: number): string[] {
  const pad = ' '.repeat(indent)
  if (isScalar(value)) return [pad + scalar(value)]
  if (Array.isArray(value)) {
    if (value.length === 0) return [pad + '[]']
    const out: string[] = []
    for (const item of value as readonly YamlValue[]) {
      if (isScalar(item)) {
        out.push(isMultiline(item) ? `${pad}- |-` : `${pad}- ${scalar(item)}`)
        if (isMultiline(item)) out.push(...block(item, indent + 2))
        continue
      }
      const nested = lines(item, indent + 2)
      out.push(`${pad}- ${(nested[0] as string).slice(indent + 2)}`, ...nested.slice(1))
    }
    return out
  }
  const entries = Object.entries(value as Record<string, YamlValue | undefined>).filter((entry): entry is [string, YamlValue] => entry[1] !== undefined)
  if (entries.length === 0) return [pad + '{}']
  const out: string[] = []
  for (const [key, item] of entries) {
    const name = /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) ? key : JSON.stringify(key)
    if (isMultiline(item)) {
      out.push(`${pad}${name}: |-`, ...block(item, indent + 2))
    } else if (isScalar(item) || (Array.isArray(item) && item.length === 0) || (!Array.isArray(item) && Object.keys(item).length === 0)) {
      out.push(`${pad}${name}: ${isScalar(item) ? scalar(item) : Array.isArray(item) ? '[]' : '{}'}`)
    } else {
      out.push(`${pad}${name}:`, ...lines(item, Array.isArray(item) ? indent + 2 : indent + 2))
    }
  }
  return out
}
