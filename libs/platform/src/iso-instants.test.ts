import { isoInstants } from './iso-instants';

describe('isoInstants', () => {
  test('when instants repeat and change, then each is the text toISOString gives', () => {
    const isoOf = isoInstants();
    for (const ms of [0, 0, 1_764_000_000_123, 1_764_000_000_123, 1_764_000_000_124, 0]) {
      expect(isoOf(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
