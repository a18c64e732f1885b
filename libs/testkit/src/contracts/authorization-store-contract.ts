import { randomBytes } from 'node:crypto';
import type { StoredAuthorization, StoredRecipientAccount } from '@rsd/domain';
import type { AuthorizationStore } from '@rsd/ports';
import { uniqueName } from './eventually';
import { describeStoreContract } from './per-test';
import { anOutboxEntry as anEntry, aStoredAuthorization, aUniqueClientId as aClientId } from './port-fixtures';

const aRecord = (organizationId: string, overrides: Partial<StoredAuthorization> = {}) =>
  aStoredAuthorization({ organizationId, ...overrides });

export interface AuthorizationStoreFixture {
  store: AuthorizationStore;
  cleanup(): Promise<void>;
}

const NOW = new Date('2026-11-21T08:00:00.000Z');

/** What every authorization store must do. Each test uses its own organization and Client IDs. */
export function describeAuthorizationStoreContract(name: string, open: () => Promise<AuthorizationStoreFixture>): void {
  describeStoreContract(`AuthorizationStore contract: ${name}`, open, (store) => {
    let organizationId: string;

    beforeEach(() => {
      organizationId = uniqueName('org');
    });

    async function pendingFor(clientId: string): Promise<string[]> {
      const pending = await store.pendingOutbox(10_000);
      return (pending.find((group) => group.clientId === clientId)?.entries ?? []).map((entry) => entry.id);
    }

    it('when a record is created, then find returns it as stored', async () => {
      const record = aRecord(organizationId, { scopes: ['qr_score', 'pillar_breakdown'], expiresAt: '2027-01-01T00:00:00.000Z' });

      await store.create(record, []);

      expect(await store.find(organizationId, record.clientId)).toEqual(record);
    });

    it('when a record has an allow list and a rotated key in its overlap, then they are stored and read back as they were', async () => {
      const record = aRecord(organizationId, { allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] });
      await store.create(record, []);
      const rotated: StoredAuthorization = {
        ...record,
        keyDigest: 'b'.repeat(64),
        previousKeyDigest: record.keyDigest,
        previousKeyExpiresAt: '2026-11-22T08:00:00.000Z',
        revision: 2,
      };

      expect(await store.update(rotated, 1, [])).toBe(true);

      expect(await store.find(organizationId, record.clientId)).toEqual(rotated);
    });

    it('when the Client ID is unknown, then find returns undefined', async () => {
      expect(await store.find(organizationId, aClientId())).toBeUndefined();
    });

    it('when a record belongs to another organization, then find and list do not show it', async () => {
      const other = aRecord(uniqueName('other-org'));
      await store.create(other, []);

      expect(await store.find(organizationId, other.clientId)).toBeUndefined();
      expect(await store.list(organizationId)).toEqual([]);
    });

    it('when a Client ID is created twice, then the second create fails and the first record stays', async () => {
      const record = aRecord(organizationId);
      await store.create(record, []);

      await expect(store.create({ ...record, recipientName: 'Impostor' }, [])).rejects.toThrow();

      expect(await store.find(organizationId, record.clientId)).toEqual(record);
    });

    it('when an organization has several records, then list returns them newest first', async () => {
      const oldest = aRecord(organizationId, { createdAt: '2026-11-01T00:00:00.000Z' });
      const newest = aRecord(organizationId, { createdAt: '2026-11-03T00:00:00.000Z' });
      const middle = aRecord(organizationId, { createdAt: '2026-11-02T00:00:00.000Z' });
      for (const record of [oldest, newest, middle]) await store.create(record, []);

      const listed = await store.list(organizationId);

      expect(listed.map((record) => record.clientId)).toEqual([newest.clientId, middle.clientId, oldest.clientId]);
    });

    it('when updated with the current revision, then the change is stored and update returns true', async () => {
      const record = aRecord(organizationId);
      await store.create(record, []);
      const revoked = { ...record, revokedAt: NOW.toISOString(), revision: 2 };

      const updated = await store.update(revoked, 1, []);

      expect(updated).toBe(true);
      expect(await store.find(organizationId, record.clientId)).toEqual(revoked);
    });

    it('when updated with a stale revision, then update returns false and nothing changes', async () => {
      const record = aRecord(organizationId);
      await store.create(record, [anEntry(record, 'created')]);
      const revoked = { ...record, revokedAt: NOW.toISOString(), revision: 2 };
      await store.update(revoked, 1, [anEntry(record, 'revoked')]);
      const pendingBefore = await pendingFor(record.clientId);

      const updated = await store.update({ ...record, expiredAt: NOW.toISOString(), revision: 2 }, 1, [anEntry(record, 'expired')]);

      expect(updated).toBe(false);
      expect(await store.find(organizationId, record.clientId)).toEqual(revoked);
      expect(await pendingFor(record.clientId)).toEqual(pendingBefore);
    });

    it('when the record is unknown, then update returns false', async () => {
      expect(await store.update(aRecord(organizationId, { revision: 2 }), 1, [])).toBe(false);
    });

    it('when entries are written with a record, then they are pending oldest first until marked published', async () => {
      const record = aRecord(organizationId);
      const created = anEntry(record, 'created');
      const revoked = anEntry(record, 'revoked');
      await store.create(record, [created]);
      await store.update({ ...record, revokedAt: NOW.toISOString(), revision: 2 }, 1, [revoked]);

      const pendingAtFirst = await store.pendingOutbox(10_000);
      await store.markPublished(record.clientId, [created.id]);
      const pendingAfterOne = await pendingFor(record.clientId);
      await store.markPublished(record.clientId, [revoked.id]);

      expect(pendingAtFirst.find((group) => group.clientId === record.clientId)?.entries).toEqual([created, revoked]);
      expect(pendingAfterOne).toEqual([revoked.id]);
      expect(await pendingFor(record.clientId)).toEqual([]);
    });

    it('when a record owes nothing, then pendingOutbox does not list it', async () => {
      const record = aRecord(organizationId);

      await store.create(record, []);

      expect((await store.pendingOutbox(10_000)).map((group) => group.clientId)).not.toContain(record.clientId);
    });

    it('when pendingOutbox is limited, then it returns at most that many Client IDs', async () => {
      for (let n = 0; n < 3; n += 1) {
        const record = aRecord(organizationId);
        await store.create(record, [anEntry(record, 'created')]);
      }

      expect(await store.pendingOutbox(2)).toHaveLength(2);
    });

    it('when expiry is checked, then records at or past expiresAt are due, and revoked, expired or later ones are not', async () => {
      const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
      const exactlyNow = aRecord(organizationId, { expiresAt: NOW.toISOString() });
      const past = aRecord(organizationId, { expiresAt: at(-60_000) });
      const oneMsLater = aRecord(organizationId, { expiresAt: at(1) });
      const revoked = aRecord(organizationId, { expiresAt: at(-60_000), revokedAt: at(-120_000), revision: 2 });
      const alreadyExpired = aRecord(organizationId, { expiresAt: at(-60_000), expiredAt: at(-59_000), revision: 2 });
      const neverExpires = aRecord(organizationId, { expiresAt: null });
      for (const record of [exactlyNow, past, oneMsLater, revoked, alreadyExpired, neverExpires]) {
        await store.create(record, []);
      }

      const due = await store.findDueForExpiry(NOW, 10_000);

      const ours = due.filter((record) => record.organizationId === organizationId).map((record) => record.clientId);
      expect(ours.sort()).toEqual([exactlyNow.clientId, past.clientId].sort());
    });

    it('when expiry is checked with a limit, then at most that many records are returned', async () => {
      for (let n = 0; n < 3; n += 1) {
        await store.create(aRecord(organizationId, { expiresAt: NOW.toISOString() }), []);
      }

      expect(await store.findDueForExpiry(NOW, 2)).toHaveLength(2);
    });

    // Decision 44: the index of the next expiry notice, kept with every write of a record.
    it('when expiry notices are checked, then records whose next notice is due are found, soonest first, and not once their notices are sent or they ended', async () => {
      const day = 86_400_000;
      const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
      const inThreeDays = aRecord(organizationId, { expiresAt: at(3 * day) });
      const inSixDays = aRecord(organizationId, { expiresAt: at(6 * day) });
      const inTenDays = aRecord(organizationId, { expiresAt: at(10 * day) });
      const revoked = aRecord(organizationId, { expiresAt: at(2 * day), revokedAt: at(-1), revision: 2 });
      const sevenDaySent = aRecord(organizationId, {
        expiresAt: at(3 * day),
        activity: { firstUsedAt: null, addresses: [], failures: [], failuresAlertedAt: null, expiryNotices: [7] },
      });
      for (const record of [inThreeDays, inSixDays, inTenDays, revoked, sevenDaySent]) await store.create(record, []);
      const ours = async (now: Date) =>
        (await store.findDueForExpiryNotice(now, 10_000))
          .filter((record) => record.organizationId === organizationId)
          .map((record) => record.clientId);

      expect(await ours(NOW)).toEqual([inThreeDays.clientId, inSixDays.clientId]);
      // Its 7-day notice sent, the next falls due a day before the expiry.
      await store.update({ ...inThreeDays, activity: sevenDaySent.activity, revision: 2 }, 1, []);
      expect(await ours(NOW)).toEqual([inSixDays.clientId]);
      // Two days on: the 6-day one (its 7-day notice due since yesterday) first, then the two whose 1-day notice is due now.
      const later = await ours(new Date(NOW.getTime() + 2 * day));
      expect(later[0]).toBe(inSixDays.clientId);
      expect(later.slice(1).sort()).toEqual([inThreeDays.clientId, sevenDaySent.clientId].sort());
    });

    // Decision 56: ALERT_ADDRESS_RETENTION_DAYS, found by the hourly pass.
    it('when alert addresses from before an instant are looked for, then the records that keep one, as a seen address or in an alert, are found, at most the limit', async () => {
      const cutOff = new Date('2001-06-01T00:00:00.000Z');
      const [old, recent] = ['2001-05-31T23:59:59.999Z', cutOff.toISOString()];
      const activity = (seenAt: string) => ({
        firstUsedAt: seenAt,
        addresses: [{ address: '198.51.100.1', seenAt }],
        failures: [],
        failuresAlertedAt: null,
        expiryNotices: [],
      });
      const seenLongAgo = aRecord(organizationId, { activity: activity(old) });
      const alertedLongAgo = aRecord(organizationId, {
        activity: activity(recent),
        alerts: [{ id: 'alr_AAAAAAAAAAAAAAAA', type: 'authorization.new_address', at: old, address: '198.51.100.1' }],
      });
      const onlyRecent = aRecord(organizationId, {
        activity: activity(recent),
        alerts: [{ id: 'alr_BBBBBBBBBBBBBBBB', type: 'authorization.new_address', at: recent, address: '198.51.100.1' }],
      });
      const oldAlertWithoutAddress = aRecord(organizationId, {
        alerts: [{ id: 'alr_CCCCCCCCCCCCCCCC', type: 'authorization.auth_failures', at: old, failures: 20 }],
      });
      for (const record of [seenLongAgo, alertedLongAgo, onlyRecent, oldAlertWithoutAddress, aRecord(organizationId)]) {
        await store.create(record, []);
      }
      const ours = async (limit: number) =>
        (await store.findWithAlertAddressesBefore(cutOff, limit)).filter((record) => record.organizationId === organizationId);

      expect((await ours(10_000)).map((record) => record.clientId).sort()).toEqual([seenLongAgo.clientId, alertedLongAgo.clientId].sort());
      expect(await store.findWithAlertAddressesBefore(cutOff, 1)).toHaveLength(1);
      await store.update({ ...seenLongAgo, activity: activity(recent), revision: 2 }, 1, []);
      expect((await ours(10_000)).map((record) => record.clientId)).toEqual([alertedLongAgo.clientId]);
    });
  });

  // Decision 38: the claim link's digest, found through the store's index; a new link replaces the old.
  describeStoreContract(`AuthorizationStore contract, claim links: ${name}`, open, (store) => {
    // Unique per test: the stores of a suite may share a database.
    const digest = () => randomBytes(32).toString('hex');
    const unclaimed = (overrides: Partial<StoredAuthorization> = {}) =>
      aRecord(uniqueName('org'), {
        keyDigest: null,
        claimTokenDigest: digest(),
        claimExpiresAt: '2026-11-24T08:00:00.000Z',
        claimedAt: null,
        claimedFromAddress: null,
        ...overrides,
      });

    it('when a record with a claim link is created, then it is found by the link digest, as stored', async () => {
      const record = unclaimed();

      await store.create(record, []);

      expect(await store.findByClaimToken(record.claimTokenDigest ?? '')).toEqual(record);
      expect(await store.find(record.organizationId, record.clientId)).toEqual(record);
    });

    it('when a digest names no link, then nothing is found', async () => {
      await store.create(aRecord(uniqueName('org')), []);

      expect(await store.findByClaimToken(digest())).toBeUndefined();
    });

    it('when a new link replaces the old one, then only the new digest finds the record', async () => {
      const record = unclaimed();
      await store.create(record, []);
      const renewed: StoredAuthorization = { ...record, claimTokenDigest: digest(), revision: 2 };

      expect(await store.update(renewed, 1, [])).toBe(true);

      expect(await store.findByClaimToken(record.claimTokenDigest ?? '')).toBeUndefined();
      expect(await store.findByClaimToken(renewed.claimTokenDigest ?? '')).toEqual(renewed);
    });

    it('when the key is claimed, then the spent link still finds the record, with the claim on it', async () => {
      const record = unclaimed();
      await store.create(record, []);
      const claimed: StoredAuthorization = {
        ...record,
        keyDigest: digest(),
        claimedAt: '2026-11-21T09:00:00.000Z',
        claimedFromAddress: '203.0.113.7',
        revision: 2,
      };

      expect(await store.update(claimed, 1, [anEntry(record, 'claimed')])).toBe(true);

      expect(await store.findByClaimToken(record.claimTokenDigest ?? '')).toEqual(claimed);
    });

    it('when a grant has a current, a previous and a leaked key, then each digest finds it, and a digest it no longer has does not', async () => {
      const record = aRecord(uniqueName('org'), { keyDigest: randomBytes(32).toString('hex') });
      await store.create(record, []);
      expect(await store.findByKeyDigest(record.keyDigest ?? '')).toEqual(record);
      const rotated: StoredAuthorization = {
        ...record,
        keyDigest: randomBytes(32).toString('hex'),
        previousKeyDigest: record.keyDigest,
        previousKeyExpiresAt: '2026-11-22T08:00:00.000Z',
        revision: 2,
      };
      expect(await store.update(rotated, 1, [])).toBe(true);
      expect(await store.findByKeyDigest(rotated.keyDigest ?? '')).toEqual(rotated);
      expect(await store.findByKeyDigest(record.keyDigest ?? '')).toEqual(rotated);

      const leaked: StoredAuthorization = {
        ...rotated,
        previousKeyDigest: null,
        previousKeyExpiresAt: null,
        leakedKeyDigest: record.keyDigest,
        revision: 3,
      };
      expect(await store.update(leaked, 2, [])).toBe(true);
      expect(await store.findByKeyDigest(record.keyDigest ?? '')).toEqual(leaked);
      expect(await store.findByKeyDigest(rotated.keyDigest ?? '')).toEqual(leaked);

      const again: StoredAuthorization = { ...leaked, keyDigest: randomBytes(32).toString('hex'), leakedKeyDigest: null, revision: 4 };
      expect(await store.update(again, 3, [])).toBe(true);
      expect(await store.findByKeyDigest(record.keyDigest ?? '')).toBeUndefined();
      expect(await store.findByKeyDigest(rotated.keyDigest ?? '')).toBeUndefined();
      expect(await store.findByKeyDigest(randomBytes(32).toString('hex'))).toBeUndefined();
    });
  });
}

const anAccount = (
  overrides: Partial<StoredRecipientAccount> & { keyDigest?: string } = {},
): StoredRecipientAccount & { keyDigest: string } => ({
  accountId: `rcp_${randomBytes(12).toString('hex').slice(0, 24)}`,
  name: 'Acme Insurance book',
  keyDigest: randomBytes(32).toString('hex'),
  previousKeyDigest: null,
  previousKeyExpiresAt: null,
  createdAt: NOW.toISOString(),
  revision: 1,
  ...overrides,
});

/** Decision 42: recipient accounts beside the authorizations, sharing their outbox. */
export function describeRecipientAccountStoreContract(name: string, open: () => Promise<AuthorizationStoreFixture>): void {
  describeStoreContract(`AuthorizationStore contract, recipient accounts: ${name}`, open, (store) => {
    it('when an account is created, then it is found by its id and by its key digest, and its events are pending under its id', async () => {
      const account = anAccount();
      const entry = { id: uniqueName('account-created'), topic: 'rsd.authorizations.v1', key: account.accountId, value: '{}' };

      await store.createAccount(account, [entry]);

      expect(await store.findAccount(account.accountId)).toEqual(account);
      expect(await store.findAccountByKeyDigest(account.keyDigest)).toEqual(account);
      const pending = await store.pendingOutbox(10_000);
      expect(pending.find((group) => group.clientId === account.accountId)?.entries.map((owed) => owed.id)).toEqual([entry.id]);
      await store.markPublished(account.accountId, [entry.id]);
      expect((await store.pendingOutbox(10_000)).some((group) => group.clientId === account.accountId)).toBe(false);
    });

    it('when the grants an account holds are listed (decision 56), then every one it holds is, ended ones included, and no other', async () => {
      const account = anAccount();
      const held = aRecord(uniqueName('org'), { recipientAccountId: account.accountId, keyDigest: null });
      const ended = aRecord(uniqueName('org'), { recipientAccountId: account.accountId, keyDigest: null, revokedAt: NOW.toISOString() });
      const offered = aRecord(uniqueName('org'), { offeredAccountId: account.accountId });
      for (const record of [held, ended, offered, aRecord(uniqueName('org'))]) await store.create(record, []);

      const listed = await store.listHeldByAccount(account.accountId);

      expect(listed.map((record) => record.clientId).sort()).toEqual([held.clientId, ended.clientId].sort());
      expect(await store.listHeldByAccount(anAccount().accountId)).toEqual([]);
    });

    it('when an account key is rotated with an overlap, then both digests find it until the next rotation drops the old one', async () => {
      const account = anAccount();
      await store.createAccount(account, []);
      const rotated = { ...account, keyDigest: randomBytes(32).toString('hex'), previousKeyDigest: account.keyDigest, revision: 2 };

      expect(await store.updateAccount(rotated, 1, [])).toBe(true);
      expect(await store.updateAccount({ ...rotated, revision: 3 }, 1, [])).toBe(false);

      expect(await store.findAccountByKeyDigest(account.keyDigest)).toEqual(rotated);
      expect(await store.findAccountByKeyDigest(rotated.keyDigest)).toEqual(rotated);
      const again = { ...rotated, keyDigest: randomBytes(32).toString('hex'), previousKeyDigest: null, revision: 3 };
      expect(await store.updateAccount(again, 2, [])).toBe(true);
      expect(await store.findAccountByKeyDigest(account.keyDigest)).toBeUndefined();
      expect(await store.findAccountByKeyDigest(rotated.keyDigest)).toBeUndefined();
    });

    it('when a leak report ended the current account key, then the leaked digest still finds the account and the account has no key', async () => {
      const account = anAccount();
      await store.createAccount(account, []);
      const ended: StoredRecipientAccount = { ...account, keyDigest: null, leakedKeyDigest: account.keyDigest, revision: 2 };

      expect(await store.updateAccount(ended, 1, [])).toBe(true);

      expect(await store.findAccount(account.accountId)).toEqual(ended);
      expect(await store.findAccountByKeyDigest(account.keyDigest)).toEqual(ended);
      expect(await store.findAccountByKeyDigest('')).toBeUndefined();
      expect(await store.findByKeyDigest(account.keyDigest)).toBeUndefined();
    });

    it('when an account id or digest is unknown, or an authorization is asked by Client ID, then each finds only its own kind', async () => {
      const account = anAccount();
      await store.createAccount(account, []);
      const record = aStoredAuthorization({
        organizationId: uniqueName('org'),
        recipientAccountId: account.accountId,
        recipientAccountName: account.name,
        keyDigest: null,
        revokedAt: NOW.toISOString(),
        revocationReason: 'released_by_recipient',
      });
      await store.create(record, []);

      expect(await store.findAccount(anAccount().accountId)).toBeUndefined();
      expect(await store.findAccountByKeyDigest(randomBytes(32).toString('hex'))).toBeUndefined();
      expect(await store.findByClientId(record.clientId)).toEqual(record);
      expect(await store.findByClientId(account.accountId)).toBeUndefined();
      expect(await store.findAccount(record.clientId)).toBeUndefined();
    });

    it('when an account names the organizations it accepts offers from, then the list is stored with it and each change replaces it', async () => {
      const account = anAccount();
      await store.createAccount(account, []);
      const trusting: StoredRecipientAccount = { ...account, autoAcceptOrganizationIds: ['acme', 'globex'], revision: 2 };

      expect(await store.updateAccount(trusting, 1, [])).toBe(true);
      expect(await store.findAccount(account.accountId)).toEqual(trusting);
      expect(await store.findAccountByKeyDigest(account.keyDigest)).toEqual(trusting);
      const none = { ...trusting, autoAcceptOrganizationIds: [], revision: 3 };
      expect(await store.updateAccount(none, 2, [])).toBe(true);
      expect(await store.findAccount(account.accountId)).toEqual(none);
    });

    /** A grant offered to `accountId` that waits for its answer (decision 50). */
    const anOffer = (accountId: string, overrides: Partial<StoredAuthorization> = {}) =>
      aStoredAuthorization({ organizationId: uniqueName('org'), keyDigest: null, offeredAccountId: accountId, ...overrides });
    const descending = (records: StoredAuthorization[]) => [...records].sort((a, b) => (a.clientId < b.clientId ? 1 : -1));

    it("when grants are offered to accounts, then each account's waiting offers are listed as stored, from the highest Client ID, page by page", async () => {
      const account = anAccount();
      const other = anAccount();
      const offers = [
        anOffer(account.accountId),
        anOffer(account.accountId, { expiresAt: '2027-01-01T00:00:00.000Z' }),
        anOffer(account.accountId),
      ];
      const theirs = anOffer(other.accountId);
      // Not offers: a grant with a key of its own, and one claimed into the account by a link.
      const notOffered = [
        aStoredAuthorization(),
        aStoredAuthorization({ keyDigest: null, recipientAccountId: account.accountId, recipientAccountName: account.name }),
      ];
      for (const record of [...offers, theirs, ...notOffered]) await store.create(record, []);
      const [first, second, third] = descending(offers);

      expect(await store.listOffers(account.accountId, { limit: 10 })).toEqual([first, second, third]);
      expect(await store.listOffers(account.accountId, { limit: 2 })).toEqual([first, second]);
      expect(await store.listOffers(account.accountId, { limit: 2, before: second?.clientId })).toEqual([third]);
      expect(await store.listOffers(account.accountId, { limit: 0 })).toEqual([]);
      expect(await store.listOffers(other.accountId, { limit: 10 })).toEqual([theirs]);
      expect(await store.listOffers(anAccount().accountId, { limit: 10 })).toEqual([]);
    });

    it('when offers are accepted, revoked or marked expired, then they are no longer listed, and each record keeps whom it was offered to', async () => {
      const account = anAccount();
      const [accepted, revoked, expired, waiting] = [1, 2, 3, 4].map(() => anOffer(account.accountId));
      for (const record of [accepted, revoked, expired, waiting]) await store.create(record!, []);

      expect(
        await store.update({ ...accepted!, recipientAccountId: account.accountId, recipientAccountName: account.name, revision: 2 }, 1, []),
      ).toBe(true);
      expect(
        await store.update({ ...revoked!, revokedAt: NOW.toISOString(), revocationReason: 'declined_by_recipient', revision: 2 }, 1, []),
      ).toBe(true);
      expect(await store.update({ ...expired!, expiredAt: NOW.toISOString(), revision: 2 }, 1, [])).toBe(true);

      expect(await store.listOffers(account.accountId, { limit: 10 })).toEqual([waiting]);
      expect(await store.findByClientId(revoked!.clientId)).toMatchObject({
        offeredAccountId: account.accountId,
        revocationReason: 'declined_by_recipient',
      });
    });
  });
}
