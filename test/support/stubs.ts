/** Stand-ins for the code's dependencies, for unit tests that look at one path of a handler. */

/**
 * An object of the interface T with only the methods given: any other method, called, throws
 * (it names the method), so a stand-in needs no change when the interface grows.
 */
export const stubOf = <T extends object>(methods: Partial<T>): T =>
  new Proxy(methods, {
    get: (target, property, receiver) => {
      if (Reflect.has(target, property) || typeof property === 'symbol' || property === 'then') {
        return Reflect.get(target, property, receiver) as unknown;
      }
      return () => {
        throw new Error(`${property} is not used here`);
      };
    },
  }) as T;
