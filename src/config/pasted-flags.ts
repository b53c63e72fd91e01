import type { ConfigProblem } from '../shared/errors.js'

/** Dashes a web page or word processor puts where a shell command had `--`: en dash, em dash, minus sign, and the other Unicode hyphens. */
const UNICODE_DASHES = /[\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]+/u

/**
 * Command-line words that look like a flag written with the wrong dash: `–num.streams` (an en
 * dash, as MirrorMaker articles print `--num.streams`), `—whitelist=.*`, a dash glued to the word
 * before it (`mirrormaker–consumer.config`), or one ASCII hyphen before a long flag
 * (`-num.streams`). One problem per word: `did you mean --num.streams`. Without this they end up
 * as a file name or as "Unknown arguments: n, u, m".
 *
 * @param knownFlags long flag names without dashes (`num.streams`)
 */
export function pastedFlagProblems (args: readonly string[], knownFlags: readonly string[]): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const known = (word: string): string | undefined => {
    const name = word.split('=', 1)[0] ?? ''
    return knownFlags.find(flag => flag.toLowerCase() === name.toLowerCase())
  }
  for (const arg of args) {
    if (arg === '--') break
    const dash = UNICODE_DASHES.exec(arg)
    if (dash !== null) {
      const before = arg.slice(0, dash.index)
      const after = arg.slice(dash.index + dash[0].length)
      const flag = known(after)
      const rest = flag === undefined ? '' : after.slice(flag.length)
      if (flag === undefined && before !== '') continue
      const suggestion = `${before === '' ? '' : `${before} `}--${flag ?? after}${rest}`
      problems.push({
        key: arg,
        message: `"${dash[0]}" is not "--" (U+${dash[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}, as pasted from a web page); did you mean ${suggestion}`,
      })
      continue
    }
    const single = /^-([^-].+)$/.exec(arg)?.[1]
    const flag = single === undefined ? undefined : known(single)
    if (single !== undefined && flag !== undefined) {
      problems.push({ key: arg, message: `long flags take two hyphens; did you mean --${flag}${single.slice(flag.length)}` })
    }
  }
  return problems
}
