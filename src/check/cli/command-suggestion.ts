import { editDistance } from '../../shared/edit-distance.js'

/**
 * The problem with the first word of a command line when it names no command, or undefined.
 * `offsets` is the default command and takes no positional arguments, so a first word that is not
 * a flag must be a command: yargs' own `recommendCommands()` stays silent when a default command
 * exists, so the nearest command (at most two edits away, or one it starts) is suggested here.
 */
export function unknownCommandLine (args: readonly string[], commands: readonly string[]): string | undefined {
  const first = args[0]
  if (first === undefined || first.startsWith('-') || commands.includes(first)) return undefined
  const nearest = commands
    .map(command => ({ command, distance: command.startsWith(first) || first.startsWith(command) ? 0 : editDistance(first, command) }))
    .sort((a, b) => a.distance - b.distance)[0]
  if (nearest !== undefined && nearest.distance <= 2) return `unknown command "${first}"; did you mean ${nearest.command}?`
  return `unknown command "${first}"; the commands are ${commands.join(', ')}`
}
