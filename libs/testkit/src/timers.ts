/** Every test of the calling block runs on Jest's fake timers with the clock at 0, and on real timers again after. */
export function useFakeTimersFromZero(): void {
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });
}
