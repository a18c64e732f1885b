import type { AccessRecord } from '@rsd/contracts';
import { dailyWindowStart, NO_USAGE, newestFirst } from '@rsd/domain';
import type { AccessLogStore } from '@rsd/ports';
import { anOrderedId } from './eventually';
import { describeStoreContract } from './per-test';
import { aUniqueClientId } from './port-fixtures';

export interface AccessLogStoreFixture {
  store: AccessLogStore;
  cleanup(): Promise<void>;
}

const NOW = new Date('2026-11-23T12:30:30.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A record `agoMs` before NOW; ids grow with each call, so records made in one order sort the same way. */
export function anAccessRecord(clientId: string, agoMs: number, overrides: Partial<AccessRecord> = {}): AccessRecord {
  const { id, sequence } = anOrderedId('access');
  return {
    id,
    clientId,
    at: new Date(NOW.getTime() - agoMs).toISOString(),
    resource: 'score',
    status: 200,
    code: null,
    clientAddress: '198.51.100.7',
    requestId: `req-${String(sequence).padStart(8, '0')}`,
    ...overrides,
  };
}

/**
 * What every access-log store must do. Records are added in the order of `at`, as the embedded
 * runtime's single process writes them; the factory gets the clock its store should use.
 */
export function describeAccessLogStoreContract(name: string, factory: (now: () => Date) => Promise<AccessLogStoreFixture>): void {
  const openAtNow = () => factory(() => NOW);
  describeStoreContract(`AccessLogStore contract: ${name}`, openAtNow, (store) => {
    async function allPages(clientId: string, limit: number): Promise<AccessRecord[][]> {
      const pages: AccessRecord[][] = [];
      for (let after: AccessRecord | undefined; ;) {
        const page = await store.page(clientId, { limit, ...(after ? { after } : {}) });
        if (page.length === 0) return pages;
        pages.push(page);
        after = page.at(-1);
      }
    }

    it('when filters are given (decision 54), then every one holds: from (at or after), to (before), a status range, the address', async () => {
      const clientId = aUniqueClientId();
      const early = anAccessRecord(clientId, 50 * MINUTE, { clientAddress: '203.0.113.1' });
      const refused = anAccessRecord(clientId, 40 * MINUTE, { status: 403, code: 'ADDRESS_NOT_ALLOWED', clientAddress: '203.0.113.2' });
      const limited = anAccessRecord(clientId, 30 * MINUTE, { status: 429, code: 'RATE_LIMITED', clientAddress: '203.0.113.1' });
      const late = anAccessRecord(clientId, 20 * MINUTE, { clientAddress: null });
      await store.add([early, refused, limited, late]);
      const page = (filter: NonNullable<Parameters<AccessLogStore['page']>[1]['filter']>, after?: AccessRecord) =>
        store.page(clientId, { limit: 10, filter, ...(after ? { after } : {}) });

      expect(await page({ from: refused.at })).toEqual([late, limited, refused]);
      expect(await page({ to: limited.at })).toEqual([refused, early]);
      expect(await page({ status: { min: 400, max: 499 } })).toEqual([limited, refused]);
      expect(await page({ status: { min: 200, max: 200 } })).toEqual([late, early]);
      expect(await page({ address: '203.0.113.1' })).toEqual([limited, early]);
      expect(await page({ address: '203.0.113.1', status: { min: 400, max: 499 }, from: early.at, to: late.at })).toEqual([limited]);
      expect(await page({ address: '203.0.113.1' }, limited)).toEqual([early]);
    });

    it('when Client IDs are purged (decision 56), then none of their records or usage is left, and another Client ID keeps its own', async () => {
      const [gone, alsoGone, staying] = [aUniqueClientId(), aUniqueClientId(), aUniqueClientId()];
      const kept = anAccessRecord(staying, 10 * MINUTE);
      await store.add([anAccessRecord(gone, 30 * MINUTE), anAccessRecord(alsoGone, 20 * MINUTE), kept]);

      await store.purgeClients([gone, alsoGone]);
      await store.purgeClients([gone, alsoGone]);

      expect(await store.page(gone, { limit: 10 })).toEqual([]);
      expect(await store.page(alsoGone, { limit: 10 })).toEqual([]);
      expect((await store.usage([gone, staying], NOW)).get(gone)).toEqual(NO_USAGE);
      expect(await store.dailyReads(gone, new Date(NOW.getTime() - DAY), NOW)).toEqual([]);
      expect(await store.page(staying, { limit: 10 })).toEqual([kept]);
      expect((await store.usage([staying], NOW)).get(staying)).not.toEqual(NO_USAGE);
    });

    it("when a recipient's addresses are erased (decision 56), then its records stay, each without its address", async () => {
      const [erased, other] = [aUniqueClientId(), aUniqueClientId()];
      const records = [anAccessRecord(erased, 30 * MINUTE), anAccessRecord(erased, 20 * MINUTE, { status: 401, code: 'INVALID_API_KEY' })];
      const untouched = anAccessRecord(other, 10 * MINUTE);
      await store.add([...records, untouched]);

      await store.eraseAddresses(erased);

      expect(await store.page(erased, { limit: 10 })).toEqual(
        [...records].sort(newestFirst).map((record) => ({ ...record, clientAddress: null })),
      );
      expect(await store.page(other, { limit: 10 })).toEqual([untouched]);
    });

    it('when certificates are fetched among other reads (decision 55), then each keeps its date and format, and the resource filter lists them alone', async () => {
      const clientId = aUniqueClientId();
      const read = anAccessRecord(clientId, 40 * MINUTE);
      const json = anAccessRecord(clientId, 30 * MINUTE, { resource: 'certificate', certificate: { asOf: '2026-11-01', format: 'json' } });
      const refused = anAccessRecord(clientId, 25 * MINUTE, { resource: 'certificate', status: 400, code: 'INVALID_PARAMETER' });
      const pdf = anAccessRecord(clientId, 20 * MINUTE, { resource: 'certificate', certificate: { asOf: '2026-11-23', format: 'pdf' } });
      await store.add([read, json, refused, pdf]);

      expect(await store.page(clientId, { limit: 10 })).toEqual([pdf, refused, json, read]);
      expect(await store.page(clientId, { limit: 10, filter: { resource: 'certificate' } })).toEqual([pdf, refused, json]);
      expect(await store.page(clientId, { limit: 10, filter: { resource: 'certificate', status: { min: 200, max: 299 } } })).toEqual([
        pdf,
        json,
      ]);
      expect(await store.page(clientId, { limit: 10, filter: { resource: 'score' } })).toEqual([read]);
    });

    it('when records of two Client IDs are added, then a page holds only the one asked for, newest first, exactly as added', async () => {
      const [mine, theirs] = [aUniqueClientId(), aUniqueClientId()];
      const older = anAccessRecord(mine, 5 * MINUTE, { status: 401, code: 'INVALID_API_KEY', resource: 'pillars', clientAddress: null });
      const other = anAccessRecord(theirs, 4 * MINUTE);
      const newer = anAccessRecord(mine, 3 * MINUTE, { status: 304, resource: 'history', clientAddress: '2001:db8::1' });

      await store.add([older, other]);
      await store.add([newer]);

      expect(await store.page(mine, { limit: 10 })).toEqual([newer, older]);
      expect(await store.page(theirs, { limit: 10 })).toEqual([other]);
      expect(await store.page(aUniqueClientId(), { limit: 10 })).toEqual([]);
    });

    it('when 300 records, many sharing an instant or a request id, are read 40 at a time, then every one comes once, in order, across days', async () => {
      const clientId = aUniqueClientId();
      const records: AccessRecord[] = [];
      for (let n = 0; n < 300; n += 1) {
        // Three records per instant, every fifth reusing a request id, spread over the last three days.
        const agoMs = Math.floor((300 - n) / 3) * 37 * MINUTE;
        records.push(anAccessRecord(clientId, agoMs, n % 5 === 0 ? { requestId: 'repeated-id' } : {}));
      }
      for (let at = 0; at < records.length; at += 70) await store.add(records.slice(at, at + 70));

      const pages = await allPages(clientId, 40);

      expect(pages.map((page) => page.length)).toEqual([40, 40, 40, 40, 40, 40, 40, 20]);
      expect(pages.flat()).toEqual([...records].sort(newestFirst));
    });

    it('when a page starts after a position, then it holds only what is strictly older in the order of at, request id and id', async () => {
      const clientId = aUniqueClientId();
      const [a, b, c] = [
        anAccessRecord(clientId, MINUTE, { requestId: 'r-a' }),
        anAccessRecord(clientId, MINUTE, { requestId: 'r-b' }),
        anAccessRecord(clientId, 0, { requestId: 'r-c' }),
      ];
      await store.add([a, b, c]);

      expect(await store.page(clientId, { limit: 10, after: c })).toEqual([b, a]);
      expect(await store.page(clientId, { limit: 10, after: b })).toEqual([a]);
      expect(await store.page(clientId, { limit: 10, after: a })).toEqual([]);
    });

    it('when reads succeed and fail over 31 days, then usage counts the successes (200 and 304) of each window and the last one', async () => {
      const clientId = aUniqueClientId();
      await store.add([
        anAccessRecord(clientId, 31 * DAY),
        anAccessRecord(clientId, 29 * DAY + 23 * HOUR),
        anAccessRecord(clientId, 25 * HOUR),
        anAccessRecord(clientId, 23 * HOUR + 59 * MINUTE, { status: 304 }),
        anAccessRecord(clientId, 2 * HOUR, { status: 429, code: 'RATE_LIMITED' }),
        anAccessRecord(clientId, 10 * MINUTE),
        anAccessRecord(clientId, 20_000),
        anAccessRecord(clientId, 5_000, { status: 401, code: 'INVALID_API_KEY' }),
        anAccessRecord(clientId, 1_000, { status: 404, code: 'SCORE_NOT_FOUND' }),
      ]);

      const usage = await store.usage([clientId, aUniqueClientId()], NOW);

      expect(usage.get(clientId)).toEqual({
        lastUsedAt: new Date(NOW.getTime() - 20_000).toISOString(),
        usage: { last24h: 3, last30d: 5 },
      });
      expect([...usage.values()][1]).toEqual(NO_USAGE);
    });

    it('when records are pruned before an instant, then records of the days before it are no longer listed and later ones still are', async () => {
      const clientId = aUniqueClientId();
      const old = [anAccessRecord(clientId, 95 * DAY), anAccessRecord(clientId, 91 * DAY)];
      const recent = [anAccessRecord(clientId, 89 * DAY), anAccessRecord(clientId, HOUR)];
      await store.add([...old, ...recent]);

      await store.prune(new Date(NOW.getTime() - 90 * DAY), NOW);

      expect(await store.page(clientId, { limit: 10 })).toEqual([...recent].reverse());
    });
  });

  // Decision 38: a claim of the key is listed with the reads, but it is no read.
  describeStoreContract(`AccessLogStore contract, claims: ${name}`, openAtNow, (store) => {
    it('when a key is claimed and read, then the claim is listed and only the read counts as use', async () => {
      const clientId = aUniqueClientId();
      const claim = anAccessRecord(clientId, 2 * MINUTE, { resource: 'claim', status: 201 });
      const read = anAccessRecord(clientId, MINUTE);
      await store.add([claim, read]);

      expect(await store.page(clientId, { limit: 10 })).toEqual([read, claim]);
      expect((await store.usage([clientId], NOW)).get(clientId)).toEqual({ lastUsedAt: read.at, usage: { last24h: 1, last30d: 1 } });
    });

    it('when reads, refusals and a claim fall on several days, then each day counts its reads and refusals apart, claims in neither', async () => {
      const clientId = aUniqueClientId();
      // NOW is 12:30:30 UTC: 13 hours ago is yesterday, 2 days ago the day before.
      await store.add([
        anAccessRecord(clientId, 2 * DAY),
        anAccessRecord(clientId, 2 * DAY - MINUTE, { status: 401, code: 'INVALID_API_KEY' }),
        anAccessRecord(clientId, 13 * HOUR, { resource: 'claim', status: 201 }),
        anAccessRecord(clientId, 13 * HOUR - MINUTE, { resource: 'claim', status: 410, code: 'CLAIM_LINK_USED' }),
        anAccessRecord(clientId, HOUR),
        anAccessRecord(clientId, 30 * MINUTE, { status: 304 }),
        anAccessRecord(clientId, MINUTE, { status: 429, code: 'RATE_LIMITED' }),
        anAccessRecord(clientId, 40 * DAY),
        anAccessRecord(aUniqueClientId(), MINUTE),
      ]);

      const days = await store.dailyReads(clientId, new Date(NOW.getTime() - 30 * DAY), NOW);

      expect(days).toEqual([
        { day: '2026-11-21', reads: 1, refusals: 1 },
        { day: '2026-11-23', reads: 2, refusals: 1 },
      ]);
    });

    it('when reads and refusals share an hour and a day ends, then the days are counted from the usage buckets, which outlive the records', async () => {
      const clientId = aUniqueClientId();
      const today = Date.parse('2026-11-23T00:00:00.000Z');
      const at = (epochMs: number) => new Date(epochMs).toISOString();
      // A refusal a millisecond before today; a read at midnight; six in NOW's hour, where the claim counts in neither.
      await store.add([
        anAccessRecord(clientId, 0, { at: at(today - 1), status: 503, code: 'UNAVAILABLE' }),
        anAccessRecord(clientId, 0, { at: at(today) }),
        anAccessRecord(clientId, 25 * MINUTE),
        anAccessRecord(clientId, 20 * MINUTE, { status: 401, code: 'INVALID_API_KEY' }),
        anAccessRecord(clientId, 15 * MINUTE, { resource: 'claim', status: 410, code: 'CLAIM_LINK_USED' }),
        anAccessRecord(clientId, 10 * MINUTE, { status: 304 }),
        anAccessRecord(clientId, 5 * MINUTE, { status: 429, code: 'RATE_LIMITED' }),
        anAccessRecord(clientId, 0, { status: 403, code: 'INSUFFICIENT_SCOPE' }),
      ]);
      await store.prune(new Date(NOW.getTime() + 1), NOW);

      const days = await store.dailyReads(clientId, dailyWindowStart(NOW, 30), new Date(NOW.getTime() + 1));

      expect(await store.page(clientId, { limit: 10 })).toEqual([]);
      expect(days).toEqual([
        { day: '2026-11-22', reads: 0, refusals: 1 },
        { day: '2026-11-23', reads: 3, refusals: 3 },
      ]);
    });

    it('when records are added again, then their reads and refusals are counted once', async () => {
      const clientId = aUniqueClientId();
      const batch = [
        anAccessRecord(clientId, 3 * MINUTE),
        anAccessRecord(clientId, 3 * MINUTE, { status: 401, code: 'INVALID_API_KEY' }),
        anAccessRecord(clientId, 2 * MINUTE, { status: 429, code: 'RATE_LIMITED' }),
        anAccessRecord(clientId, 2 * MINUTE, { resource: 'claim', status: 410, code: 'CLAIM_LINK_USED' }),
      ];
      const later = anAccessRecord(clientId, MINUTE, { status: 404, code: 'SCORE_NOT_FOUND' });

      await store.add(batch);
      await store.add([...batch, later]);
      await store.add(batch);

      expect(await store.dailyReads(clientId, dailyWindowStart(NOW, 30), NOW)).toEqual([{ day: '2026-11-23', reads: 1, refusals: 3 }]);
      expect((await store.usage([clientId], NOW)).get(clientId)?.usage).toEqual({ last24h: 1, last30d: 1 });
    });

    it('when only the claim happened, then there is no use yet', async () => {
      const clientId = aUniqueClientId();
      await store.add([anAccessRecord(clientId, MINUTE, { resource: 'claim', status: 201 })]);

      expect((await store.usage([clientId], NOW)).get(clientId)).toEqual(NO_USAGE);
    });
  });
}
