import { domainEventSchema, EVENT_TYPES, newEvent, traceparentSchema, tracestateSchema, type AuthorizationRevoked } from './events';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const anEvent = (extension: Record<string, unknown> = {}) => ({
  ...newEvent<AuthorizationRevoked>({
    id: 'evt-1',
    source: '/credentials',
    time: new Date('2026-03-01T10:00:00.000Z'),
    type: EVENT_TYPES.authorizationRevoked,
    data: {
      clientId: 'rs_aaaaaaaaaaaaaaaa',
      organizationId: 'org-1',
      revokedAt: '2026-03-01T10:00:00.000Z',
      revision: 2,
    },
  }),
  ...extension,
});

describe('the CloudEvents distributed-tracing extension (decision 39)', () => {
  test('when an event has no traceparent (written untraced, or before decision 39), then it is valid as it was', () => {
    const result = domainEventSchema.safeParse(anEvent());

    expect(result.success).toBe(true);
    expect(result.data).not.toHaveProperty('traceparent');
    expect(result.data).not.toHaveProperty('tracestate');
  });

  test('when an event carries a traceparent and a tracestate, then both are kept as written', () => {
    const result = domainEventSchema.safeParse(
      anEvent({ traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' }),
    );

    expect(result.data).toMatchObject({ traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' });
  });

  test.each([
    ['not a traceparent', 'junk'],
    ['an upper-case trace id', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['an all-zero parent id', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['version 00 with more after it', `${TRACEPARENT}-extra`],
    ['a short parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902-01'],
    ['a number', 42],
    ['an object', { traceId: 'x' }],
    ['a very long string', `00-${'a'.repeat(10_000)}`],
  ])(
    'when the traceparent is %s, then it is dropped and the event stays valid (a receiver ignores a malformed one)',
    (_case, traceparent) => {
      const result = domainEventSchema.safeParse(anEvent({ traceparent, tracestate: 'rojo=00f067aa0ba902b7' }));

      expect(result.success).toBe(true);
      expect(result.data?.traceparent).toBeUndefined();
      expect(result.data?.data).toEqual(anEvent().data);
    },
  );

  test.each([
    ['a member without a value', 'rojo'],
    ['an upper-case key', 'Rojo=1'],
    ['an = inside a value', 'rojo=a=b'],
    ['33 members', Array.from({ length: 33 }, (_, n) => `k${n}=v`).join(',')],
    ['more than 512 characters', `rojo=${'a'.repeat(600)}`],
    ['not a string', ['rojo=1']],
  ])('when the tracestate has %s, then it is dropped and the traceparent kept', (_case, tracestate) => {
    const result = domainEventSchema.safeParse(anEvent({ traceparent: TRACEPARENT, tracestate }));

    expect(result.success).toBe(true);
    expect(result.data?.traceparent).toBe(TRACEPARENT);
    expect(result.data?.tracestate).toBeUndefined();
  });

  test('when a later version of traceparent carries more fields, then it is accepted as W3C says a version-00 reader must', () => {
    expect(traceparentSchema.safeParse('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more').success).toBe(true);
  });

  test('when a tracestate has a multi-tenant key, spaces around members and empty members, then it is valid', () => {
    expect(tracestateSchema.safeParse('acme@vendor=1 , ,rojo=00f067aa0ba902b7').success).toBe(true);
  });

  test('when the rest of an event is invalid, then a valid traceparent does not make it valid', () => {
    const { data: _data, ...withoutData } = anEvent({ traceparent: TRACEPARENT });

    expect(domainEventSchema.safeParse(withoutData).success).toBe(false);
  });
});
