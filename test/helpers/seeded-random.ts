/**
 * A small seeded pseudo-random generator (mulberry32) for property-based tests: the same seed
 * gives the same sequence of operations, so a failure names the seed that reproduces it.
 */
export class SeededRandom {
  #state: number

  constructor (readonly seed: number) {
    this.#state = seed >>> 0
  }

  /** A float in [0, 1). */
  next (): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [0, bound). */
  int (bound: number): number {
    return Math.floor(this.next() * bound)
  }

  /** One of `items` (which must not be empty). */
  pick<T> (items: readonly T[]): T {
    return items[this.int(items.length)] as T
  }

  /** True with probability `p`. */
  chance (p: number): boolean {
    return this.next() < p
  }
}

/** Runs `property` once per seed from 1 to `runs`, naming the seed in any failure. */
export function forSeeds (runs: number, property: (random: SeededRandom) => void): void {
  for (let seed = 1; seed <= runs; seed++) {
    try {
      property(new SeededRandom(seed))
    } catch (error) {
      throw new Error(`property failed for seed ${seed}: ${(error as Error).message}`, { cause: error })
    }
  }
}
