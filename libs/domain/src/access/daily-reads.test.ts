import { countsAsRefusal, countsAsUse, dailyWindowStart, everyDay } from './usage';

const NOW = new Date('2026-11-20T10:00:00.000Z');

describe('reads per day (decision 38)', () => {
  test('when the window of 30 days is asked for, then it starts at midnight UTC 29 days before today', () => {
    expect(dailyWindowStart(NOW, 30).toISOString()).toBe('2026-10-22T00:00:00.000Z');
  });

  test('when a store counted some days, then every day of the window is there, oldest first, with zeros where nothing was counted', () => {
    const days = everyDay([{ day: '2026-11-18', reads: 3, refusals: 1 }], NOW, 30);

    expect(days).toHaveLength(30);
    expect(days[0]).toEqual({ day: '2026-10-22', reads: 0, refusals: 0 });
    expect(days[27]).toEqual({ day: '2026-11-18', reads: 3, refusals: 1 });
    expect(days[29]).toEqual({ day: '2026-11-20', reads: 0, refusals: 0 });
  });

  test.each([
    [{ resource: 'score', status: 200 }, true, false],
    [{ resource: 'pillars', status: 304 }, true, false],
    [{ resource: 'score', status: 401 }, false, true],
    [{ resource: 'history', status: 503 }, false, true],
    [{ resource: 'claim', status: 201 }, false, false],
    [{ resource: 'claim', status: 410 }, false, false],
  ])('when a record is %p, then it counts as a read: %p, as a refusal: %p', (record, read, refusal) => {
    expect([countsAsUse(record), countsAsRefusal(record)]).toEqual([read, refusal]);
  });
});
