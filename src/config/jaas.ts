import type { ProblemList } from './values.js'

/** One login module entry of a `sasl.jaas.config` value. Options hold secrets: never log them. */
export interface JaasEntry {
  /** Fully qualified class, e.g. `org.apache.kafka.common.security.scram.ScramLoginModule`. */
  readonly loginModule: string
  readonly controlFlag: 'required' | 'requisite' | 'sufficient' | 'optional'
  readonly options: ReadonlyMap<string, string>
}

type Token =
  | { readonly kind: 'word', readonly text: string }
  | { readonly kind: 'quoted', readonly text: string }
  | { readonly kind: 'char', readonly text: string }

const WORD_START = /[A-Za-z_$\u00A0-\u00FF]/
const WORD_PART = /[A-Za-z0-9_$.\-\u00A0-\u00FF]/
const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' }

class JaasSyntaxError extends Error {}

/**
 * Splits a JAAS line the way Kafka's `JaasConfig` does with `java.io.StreamTokenizer`: words of
 * letters, digits, `.`, `-`, `_`, `$`; single or double quoted strings with backslash escapes
 * (`\n`, `\t`, octal, `\x` for any other x), ending at the line end if unclosed; `//` and
 * `/* *\/` comments; any other character is a token of its own.
 */
function tokenize (text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    if (/\s/.test(c)) { i++; continue }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++
      continue
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end === -1 ? text.length : end + 2
      continue
    }
    if (c === '"' || c === '\'') {
      let out = ''
      i++
      for (;;) {
        const d = text[i]
        if (d === undefined || d === '\n' || d === '\r') throw new JaasSyntaxError(`a quoted value is not closed with ${c}`)
        i++
        if (d === c) break
        if (d !== '\\') { out += d; continue }
        const e = text[i]
        if (e === undefined) throw new JaasSyntaxError(`a quoted value is not closed with ${c}`)
        const octal = /^[0-7]{1,3}/.exec(text.slice(i, i + 3))?.[0]
        if (octal !== undefined && (octal.length < 3 || Number(octal[0]) <= 3)) {
          out += String.fromCharCode(parseInt(octal, 8))
          i += octal.length
        } else if (octal !== undefined) {
          out += String.fromCharCode(parseInt(octal.slice(0, 2), 8))
          i += 2
        } else {
          out += ESCAPES[e] ?? e
          i++
        }
      }
      tokens.push({ kind: 'quoted', text: out })
      continue
    }
    if (WORD_START.test(c)) {
      let j = i + 1
      while (j < text.length && WORD_PART.test(text[j] as string)) j++
      tokens.push({ kind: 'word', text: text.slice(i, j) })
      i = j
      continue
    }
    tokens.push({ kind: 'char', text: c })
    i++
  }
  return tokens
}

const CONTROL_FLAGS = ['required', 'requisite', 'sufficient', 'optional'] as const

/** The entries of a JAAS configuration; throws `JaasSyntaxError` with a message free of option values. */
function parseEntries (text: string): JaasEntry[] {
  const tokens = tokenize(text)
  const entries: JaasEntry[] = []
  let at = 0
  while (at < tokens.length) {
    const module = tokens[at++]
    if (module?.kind !== 'word') throw new JaasSyntaxError(`expected a login module class name, found "${module?.text ?? ''}"`)
    const flagToken = tokens[at++]
    const flag = CONTROL_FLAGS.find(f => f === flagToken?.text.toLowerCase())
    if (flagToken === undefined || flagToken.kind !== 'word' || flag === undefined) {
      throw new JaasSyntaxError(`expected a control flag (required) after ${module.text}`)
    }
    const options = new Map<string, string>()
    for (;;) {
      const key = tokens[at++]
      if (key === undefined) throw new JaasSyntaxError('the entry does not end with a semicolon')
      if (key.kind === 'char' && key.text === ';') break
      if (key.kind !== 'word') throw new JaasSyntaxError(`expected an option name, found "${key.kind === 'char' ? key.text : '(a quoted value)'}"`)
      const equals = tokens[at++]
      const value = tokens[at++]
      if (equals?.kind !== 'char' || equals.text !== '=' || value === undefined || value.kind === 'char') {
        throw new JaasSyntaxError(`no value for option ${key.text}; write ${key.text}="..." (quote values holding characters other than letters, digits, . - _ $)`)
      }
      options.set(key.text, value.text)
    }
    entries.push({ loginModule: module.text, controlFlag: flag, options })
  }
  return entries
}

/**
 * Parses a client's `sasl.jaas.config`: exactly one login module entry ending with `;`. Problems
 * name the key but never repeat the value (it holds the password).
 */
export function parseJaasConfig (key: string, text: string, problems: ProblemList): JaasEntry | undefined {
  let entries: JaasEntry[]
  try {
    entries = parseEntries(text)
  } catch (error) {
    if (!(error instanceof JaasSyntaxError)) throw error
    problems.add(
      key,
      undefined,
      `not a valid JAAS line: ${error.message}; expect e.g. org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="...";`
    )
    return undefined
  }
  if (entries.length !== 1) {
    problems.add(
      key,
      undefined,
      `holds ${entries.length} login modules; a client takes exactly one, e.g. org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="...";`
    )
    return undefined
  }
  return entries[0]
}
