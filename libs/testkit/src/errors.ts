/** The error `act` throws, which must be a `type`: anything else it throws goes on, and throwing nothing fails the test. */
export function thrownBy<E>(act: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    act();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}`);
}
