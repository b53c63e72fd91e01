import { ConfigError } from '../shared/errors.js'
import { ProblemList } from './values.js'

/** One key of a `.properties` file with where it came from, for error messages. */
export interface PropertyEntry {
  readonly value: string
  readonly file: string
  readonly line: number
  /** The text as written when the value came from a config provider (`${env:NAME}`): shown instead of the value. */
  readonly reference?: string
}

export type Properties = ReadonlyMap<string, PropertyEntry>

/** The first `\u` in `text` not followed by four hex digits (as written, up to six characters), or undefined. */
function malformedUnicodeEscape (text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') continue
    if (text[i + 1] === 'u' && !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return text.slice(i, i + 6)
    i++
  }
  return undefined
}

function unescape (text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c !== '\\') { out += c; continue }
    const next = text[++i]
    if (next === undefined) break
    if (next === 't') out += '\t'
    else if (next === 'n') out += '\n'
    else if (next === 'r') out += '\r'
    else if (next === 'f') out += '\f'
    else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16))
      i += 4
    } else out += next
  }
  return out
}

function endsWithContinuation (line: string): boolean {
  let backslashes = 0
  for (let i = line.length - 1; i >= 0 && line[i] === '\\'; i--) backslashes++
  return backslashes % 2 === 1
}

/**
 * Parses text in `java.util.Properties.load` syntax: `#`/`!` comments, `key=value`, `key: value`
 * and `key value`, backslash line continuations and escapes (`\t`, `\uXXXX`). Later keys win.
 * A `\u` without four hex digits after it is refused, as `Properties.load` refuses it ("Malformed
 * \uxxxx encoding"): a `ConfigError` with one problem per such line, naming file, line and key.
 */
export function parseProperties (text: string, file = '<text>'): Map<string, PropertyEntry> {
  const result = new Map<string, PropertyEntry>()
  const problems = new ProblemList()
  const lines = text.split(/\r\n|\r|\n/)
  for (let i = 0; i < lines.length; i++) {
    const startLine = i + 1
    let logical = (lines[i] ?? '').replace(/^[ \t\f]+/, '')
    if (logical === '' || logical.startsWith('#') || logical.startsWith('!')) continue
    while (endsWithContinuation(logical) && i + 1 < lines.length) {
      logical = logical.slice(0, -1) + (lines[++i] ?? '').replace(/^[ \t\f]+/, '')
    }
    if (endsWithContinuation(logical)) logical = logical.slice(0, -1)
    let keyEnd = 0
    while (keyEnd < logical.length) {
      const c = logical[keyEnd]
      if (c === '\\') { keyEnd += 2; continue }
      if (c === '=' || c === ':' || c === ' ' || c === '\t' || c === '\f') break
      keyEnd++
    }
    let valueStart = keyEnd
    while (valueStart < logical.length && /[ \t\f]/.test(logical[valueStart] ?? '')) valueStart++
    if (logical[valueStart] === '=' || logical[valueStart] === ':') valueStart++
    while (valueStart < logical.length && /[ \t\f]/.test(logical[valueStart] ?? '')) valueStart++
    const rawKey = logical.slice(0, keyEnd)
    const malformedInKey = malformedUnicodeEscape(rawKey)
    const malformed = malformedInKey ?? malformedUnicodeEscape(logical.slice(valueStart))
    if (malformed !== undefined) {
      const key = malformedInKey === undefined ? unescape(rawKey) : rawKey
      problems.add(
        `${file}:${startLine}: ${key}`,
        malformed,
        `malformed \\uxxxx escape${malformedInKey === undefined ? '' : ' in the key'} (Java refuses the file too); write four hex digits after \\u, or \\\\u for a backslash followed by u`
      )
      continue
    }
    result.set(unescape(rawKey), { value: unescape(logical.slice(valueStart)), file, line: startLine })
  }
  if (!problems.empty) throw new ConfigError(problems.problems)
  return result
}
