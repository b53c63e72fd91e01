import { assertKafkajsPatched } from '../../kafka/kafkajs-internals.js'
import { ConfigError, MirrorError } from '../../shared/errors.js'
import { redactUrlsIn } from '../../shared/redact-url.js'
import { ExitCode, UsageError } from './exit-codes.js'

/**
 * Runs a command body and turns its outcome into an exit code: a thrown error becomes one line on
 * stderr (each configuration problem on its own line) and exit 2; the stack only with `--verbose`.
 */
export async function runCommand (args: { verbose?: boolean }, body: () => Promise<ExitCode>): Promise<void> {
  try {
    assertKafkajsPatched()
    process.exitCode = await body()
  } catch (error) {
    process.exitCode = ExitCode.ERROR
    const message = error instanceof ConfigError
      ? error.problems.map(p => p.value === undefined ? `${p.key}: ${p.message}` : `${p.key} "${p.value}": ${p.message}`).join('\nmirror-check: ')
      : error instanceof MirrorError || error instanceof UsageError ? error.message : `unexpected error: ${(error as Error)?.message ?? String(error)}`
    process.stderr.write(`mirror-check: ${redactUrlsIn(message)}\n`)
    if (args.verbose === true && error instanceof Error && error.stack !== undefined) process.stderr.write(redactUrlsIn(error.stack) + '\n')
  }
}

/** camelCase to kebab-case: `bogusFlag` to `bogus-flag`. */
function kebab (name: string): string {
  return name.replace(/[A-Z]/g, c => `-${c.toLowerCase()}`)
}

/**
 * One line for a yargs usage message. yargs puts the bad value and the choices of a `choices`
 * option on the lines after "Invalid values:"; they become `--format "xml": expected one of
 * table, json, csv`. yargs lists an unknown flag under both its spellings (`bogus-flag, bogusFlag`):
 * each is named once, as given. Other messages keep their first line.
 */
export function usageLine (message: string): string {
  const unknown = /^Unknown arguments?: (.+)$/m.exec(message)
  if (unknown !== null) {
    const names = (unknown[1] ?? '').split(', ')
    const once = names.filter(name => kebab(name) === name || !names.includes(kebab(name)))
    return `Unknown argument${once.length === 1 ? '' : 's'}: ${once.join(', ')}`
  }
  const invalid = [...message.matchAll(/Argument: (.+?), Given: (.+?), Choices: (.+)$/gm)]
  if (invalid.length === 0) return message.split('\n')[0] ?? message
  return invalid.map(([, name = '', given = '', choices = '']) => {
    const names = choices.split(/,\s*/).map(choice => choice.replace(/^"(.*)"$/, '$1'))
    return `--${name} ${given}: expected one of ${names.join(', ')}`
  }).join('; ')
}
