/** An observer: an object of optional callbacks that return nothing. */
type Callbacks<T> = { [K in keyof T]?: (...args: never[]) => void }

/**
 * One observer that calls each of `observers`' callbacks in turn, in the order given; an event no
 * observer handles stays undefined (callers skip building its arguments). `events` names every
 * callback of the interface (declare it `satisfies Record<keyof T, true>` so none is forgotten).
 * Observers must not throw: they run on the hot path.
 */
export function fanOut<T extends Callbacks<T>> (events: Readonly<Record<keyof T, true>>, ...observers: readonly T[]): T {
  const combined: Partial<Record<keyof T, unknown>> = {}
  for (const key of Object.keys(events) as Array<keyof T>) {
    const callbacks = observers
      .map(observer => (observer[key] as ((...a: unknown[]) => void) | undefined)?.bind(observer))
      .filter(callback => callback !== undefined)
    if (callbacks.length === 0) continue
    combined[key] = callbacks.length === 1 ? callbacks[0] : (...args: unknown[]) => { for (const callback of callbacks) callback(...args) }
  }
  return combined as T
}
