/** Edit distance (insertions, deletions, substitutions) between two words. */
function editDistance (a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = row
  }
  return previous[b.length] ?? 0
}

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
