/**
 * Edit distance between two words: insertions, deletions, substitutions and swaps of two
 * neighbouring characters, each counting one (the optimal string alignment distance), so a typed
 * `enabeld` is one edit from `enabled`.
 */
export function editDistance (a: string, b: string): number {
  let beforePrevious: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (beforePrevious[j - 2] ?? 0) + 1)
      row[j] = best
    }
    beforePrevious = previous
    previous = row
  }
  return previous[b.length] ?? 0
}
