/**
 * The contenders in the order of run `run` (1-based): as given, except that the sidecar and its
 * baseline swap places every other run, so neither always runs first after the ceiling.
 */
export function runOrder<T extends { readonly name: string }> (contenders: readonly T[], run: number): T[] {
  const order = [...contenders]
  const a = order.findIndex(c => c.name === 'sidecar')
  const b = order.findIndex(c => c.name === 'baseline')
  if (run % 2 === 0 && a >= 0 && b >= 0) [order[a], order[b]] = [order[b] as T, order[a] as T]
  return order
}

/**
 * The contenders of the latency mode in the order of run `run` (1-based): rotated one place per
 * run, so over as many runs as there are contenders each is measured at every place once.
 */
export function rotatedOrder<T> (contenders: readonly T[], run: number): T[] {
  if (contenders.length === 0) return []
  const shift = (run - 1) % contenders.length
  return [...contenders.slice(shift), ...contenders.slice(0, shift)]
}
