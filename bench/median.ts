/** The median of the finite values (NaN runs left out); NaN when none is finite. */
export function median (values: readonly number[]): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (finite.length === 0) return Number.NaN
  const middle = Math.floor(finite.length / 2)
  return finite.length % 2 === 1 ? finite[middle]! : (finite[middle - 1]! + finite[middle]!) / 2
}
