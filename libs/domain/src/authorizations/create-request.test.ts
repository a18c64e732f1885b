import { resolveExpiresAt } from './create-request';

describe("a create request's expiry", () => {
  test.each([
    ['2026-12-31', '2027-01-01T00:00:00.000Z'],
    ['2028-02-28', '2028-02-29T00:00:00.000Z'],
    ['2026-12-01T00:00:00Z', '2026-12-01T00:00:00.000Z'],
    ['2026-12-01T01:30:00.5+01:30', '2026-12-01T00:00:00.500Z'],
    ['2026-12-01T00:00:00.123456-05:00', '2026-12-01T05:00:00.123Z'],
  ])('when expiresAt is %s, then it resolves to %s', (input, expected) => {
    expect(resolveExpiresAt(input).toISOString()).toBe(expected);
  });
});
