/**
 * Wraps an object that can check its invariants so that every method call (a step) is followed by
 * `checkInvariants()`: an example-based test then checks them after every step it takes. Methods
 * run on the object itself, so its private fields work.
 */
export function checked<T extends { checkInvariants: () => void }> (target: T): T {
  return new Proxy(target, {
    get (object, property) {
      const value: unknown = Reflect.get(object, property, object)
      if (typeof value !== 'function' || property === 'checkInvariants') return value
      return (...args: unknown[]): unknown => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(object, args)
        object.checkInvariants()
        return result
      }
    },
  })
}
