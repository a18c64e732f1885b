import type { Collection, Db, UpdateFilter } from 'mongodb';
import {
  keepsAlertAddressesBefore,
  nextExpiryNoticeAt,
  offerAwaitingAccountOf,
  type StoredAuthorization,
  type StoredRecipientAccount,
} from '@rsd/domain';
import type { AuthorizationStore, OutboxEntry, PendingOutbox } from '@rsd/ports';
import { insertNew, insertNewOfKind } from './duplicate-key';
import { entryOf, outboxFieldsOf } from './outbox-fields';
import { openWriteClaims, updateAtRevision } from './write-claims';
import { indexAccessReviews, mongoAccessReviews, type AccessReviewDocument } from './mongo-access-reviews';
import { reportingOutages } from './outages';
import { createPerKeyQueue } from './per-key-queue';

export const AUTHORIZATIONS_COLLECTION = 'authorizations';

/**
 * One document per authorization: the record, the events it still owes, and two fields derived
 * from them for the queries. A record and its events therefore change in one single-document write,
 * which is the transactional outbox without a multi-document transaction.
 */
interface AuthorizationDocument extends StoredAuthorization, GrantKeyFields {
  _id: string;
  outbox: OutboxEntry[];
  /** Kept in step with `outbox` in the same write, so the relay's query is an indexed equality. */
  hasOutbox: boolean;
  /**
   * `expiresAt` while the record is neither revoked nor expired, absent otherwise: its sparse index
   * holds only what can still fall due (FerretDB 1.24 has no partial indexes).
   */
  pendingExpiryAt?: string;
  /**
   * Decision 44: when the next expiry notice falls due while the record has a `pendingExpiryAt`
   * (`NO_NOTICE_LEFT` once none is), so that one without it is known to predate notices.
   */
  pendingNoticeAt?: string;
  /** Decision 50: the account an offer waits for, absent otherwise, so that its sparse index holds the waiting offers alone. */
  offerAwaitingAccountId?: string;
  /** The store's own write sequence (see `openWriteClaims`); absent on documents no write has changed since their creation. */
  writeSeq?: number;
}

/** Sorts after every instant: the record has an expiry ahead but no notice left to send. */
const NO_NOTICE_LEFT = '9999-12-31T23:59:59.999Z';

/** Exactly the fields of StoredAuthorization: what is read back (no `_id`, no outbox) and what a write sets. */
const RECORD_FIELDS = [
  'clientId',
  'organizationId',
  'recipientType',
  'recipientName',
  'scopes',
  'keyDigest',
  'previousKeyDigest',
  'previousKeyExpiresAt',
  'leakedKeyDigest',
  'allowedCidrs',
  'expiresAt',
  'claimTokenDigest',
  'claimExpiresAt',
  'claimedAt',
  'claimedFromAddress',
  'recipientAccountId',
  'recipientAccountName',
  'offeredAccountId',
  'createdAt',
  'revokedAt',
  'revocationReason',
  'expiredAt',
  'activity',
  'alerts',
  'revision',
] as const satisfies readonly (keyof StoredAuthorization)[];

const RECORD_PROJECTION = { _id: 0, ...Object.fromEntries(RECORD_FIELDS.map((field) => [field, 1])) };

/**
 * Decision 42: a recipient account is a document of the same collection, `_id` its account id (which
 * no Client ID can be: `rcp_` ids have no organization), so the relay's one outbox query publishes
 * its events too and `find` by organization never returns it.
 */
interface AccountDocument extends StoredRecipientAccount {
  _id: string;
  kind: 'recipient-account';
  outbox: OutboxEntry[];
  hasOutbox: boolean;
  writeSeq?: number;
}

const ACCOUNT_FIELDS = [
  'accountId',
  'name',
  'keyDigest',
  'previousKeyDigest',
  'previousKeyExpiresAt',
  'leakedKeyDigest',
  'autoAcceptOrganizationIds',
  'createdAt',
  'revision',
] as const satisfies readonly (keyof StoredRecipientAccount)[];

const ACCOUNT_PROJECTION = { _id: 0, ...Object.fromEntries(ACCOUNT_FIELDS.map((field) => [field, 1])) };

/**
 * The authorization store on MongoDB (or FerretDB). Instants are stored as the records carry them,
 * ISO strings in the fixed `YYYY-MM-DDTHH:mm:ss.sssZ` form, whose lexical order is time order; so
 * documents read back exactly as written and range queries compare like the embedded store does.
 *
 * Any number of processes may write, on MongoDB and on FerretDB alike. FerretDB 1.24 applies a
 * filtered update as a read, a filter evaluated in Go and a rewrite of the whole document by `_id`,
 * so two guarded updates (two credentials replicas, or one replica's update and the relay leader's
 * `markPublished`) could both "match" and the later rewrite drop the earlier one's change. Every
 * write to a document after its creation is therefore made by the one writer of its next write
 * sequence number (`openWriteClaims`), which a unique `_id` insert decides, the one write FerretDB
 * makes atomic. MongoDB needs none of it and pays two small writes; there is one code path.
 * Within this process, writes to one document also run one at a time.
 */
export async function openMongoAuthorizationStore(db: Db): Promise<AuthorizationStore> {
  const authorizations = db.collection<AuthorizationDocument>(AUTHORIZATIONS_COLLECTION);
  // One index per command: FerretDB 1.24 drops the connection when one createIndexes names several
  // indexes that already exist, so a second start on the same database would fail.
  await authorizations.createIndex({ organizationId: 1, createdAt: -1 });
  await authorizations.createIndex({ pendingExpiryAt: 1 }, { sparse: true });
  await authorizations.createIndex({ pendingNoticeAt: 1 }, { sparse: true });
  await authorizations.createIndex({ hasOutbox: 1, createdAt: 1 });
  // Decision 38: sparse, so the records delivered in the response (no link) are not in it.
  await authorizations.createIndex({ claimTokenDigest: 1 }, { sparse: true });
  // Decision 42: an account by either of its keys' digests (sparse: authorizations hold no such fields at the top level for accounts).
  await authorizations.createIndex({ accountKeyDigest: 1 }, { sparse: true });
  await authorizations.createIndex({ accountPreviousKeyDigest: 1 }, { sparse: true });
  // Decision 43: a grant by any of its keys' digests, and an account by its last leaked key, for a leak report.
  await authorizations.createIndex({ grantKeyDigest: 1 }, { sparse: true });
  await authorizations.createIndex({ grantPreviousKeyDigest: 1 }, { sparse: true });
  await authorizations.createIndex({ grantLeakedKeyDigest: 1 }, { sparse: true });
  await authorizations.createIndex({ accountLeakedKeyDigest: 1 }, { sparse: true });
  // Decision 50: the offers waiting for an account's answer (sparse: every other document lacks the field).
  await authorizations.createIndex({ offerAwaitingAccountId: 1 }, { sparse: true });
  // Decision 54: access reviews, in the same collection (sparse: every other document lacks their fields).
  await indexAccessReviews(db.collection(AUTHORIZATIONS_COLLECTION));
  await indexEarlierExpiryNotices(db);
  await indexKeysOfEarlierGrants(db, authorizations);
  const accounts = db.collection<AccountDocument & AccountKeyFields>(AUTHORIZATIONS_COLLECTION);
  const soleWriter = await openWriteClaims(db);
  const writes = createPerKeyQueue();
  let closed = false;

  function write<T>(clientId: string, task: () => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new Error('the authorization store is closed'));
    return writes.run(clientId, task);
  }

  /** Up to `limit` active records whose `field` (a pending expiry or expiry notice) has come by `now`, earliest first. */
  async function findDue(field: 'pendingExpiryAt' | 'pendingNoticeAt', now: Date, limit: number): Promise<StoredAuthorization[]> {
    if (limit <= 0) return [];
    const found = await authorizations
      .find<StoredAuthorization>(
        { [field]: { $lte: now.toISOString() }, revokedAt: null, expiredAt: null },
        { projection: RECORD_PROJECTION, sort: { [field]: 1, _id: 1 }, limit },
      )
      .toArray();
    return found.map(recordOf);
  }

  return reportingOutages<AuthorizationStore>({
    ...mongoAccessReviews(db.collection<AccessReviewDocument>(AUTHORIZATIONS_COLLECTION), write, soleWriter),

    create(record, outbox) {
      return write(record.clientId, () =>
        insertNew(`authorization ${record.clientId}`, () => authorizations.insertOne(documentOf(record, outbox))),
      );
    },

    async listHeldByAccount(accountId) {
      const found = await authorizations
        .find<StoredAuthorization>({ recipientAccountId: accountId }, { projection: RECORD_PROJECTION, sort: { _id: 1 } })
        .toArray();
      return found.map(recordOf);
    },

    async findWithAlertAddressesBefore(before, limit) {
      // A scan, hourly (no index kept for it, as for listHeldByAccount): FerretDB 1.24's $elemMatch takes no
      // field of an array's documents, so the grants that remember any activity or alert are read as a stream
      // and the domain's rule picks those that keep an old address, until `limit` are found.
      const found: StoredAuthorization[] = [];
      const candidates = authorizations.find<StoredAuthorization>(
        { $or: [{ activity: { $exists: true } }, { alerts: { $exists: true } }] },
        { projection: RECORD_PROJECTION },
      );
      try {
        for await (const document of candidates) {
          const record = recordOf(document);
          if (keepsAlertAddressesBefore(record, before)) found.push(record);
          if (found.length >= limit) break;
        }
      } finally {
        await candidates.close();
      }
      return found;
    },

    async purgeOrganization(organizationId) {
      const owned = await authorizations.find({ organizationId }, { projection: { _id: 1 } }).toArray();
      const clientIds = owned.map((document) => document._id);
      // Each grant in its turn among this process's writes to it; its keys' and link's digests are fields of the same document.
      for (const clientId of clientIds) await write(clientId, () => authorizations.deleteOne({ _id: clientId }));
      // Decision 54's reviews name the grants' recipients: they go with the organization.
      await db.collection(AUTHORIZATIONS_COLLECTION).deleteMany({ reviewOrganizationId: organizationId });
      return clientIds;
    },

    async knownClientIds(clientIds) {
      if (clientIds.length === 0) return new Set();
      // Accounts share the collection: only documents that are grants (their clientId is their _id) count.
      const found = await authorizations
        .find({ _id: { $in: [...new Set(clientIds)] }, clientId: { $exists: true } }, { projection: { clientId: 1 } })
        .toArray();
      return new Set(found.map((document) => String(document.clientId)));
    },

    update(record, expectedRevision, outbox) {
      return write(record.clientId, async () => {
        return updateAtRevision(soleWriter, authorizations, { id: record.clientId, expectedRevision, outbox }, changeTo(record));
      });
    },

    async find(organizationId, clientId) {
      // By `_id` alone, a top-level equality FerretDB 1.24 hands down to its backend; the organization is checked here.
      const found = await authorizations.findOne<StoredAuthorization>({ _id: clientId }, { projection: RECORD_PROJECTION });
      return found?.organizationId === organizationId ? recordOf(found) : undefined;
    },

    async findByClientId(clientId) {
      const found = await authorizations.findOne<StoredAuthorization>({ _id: clientId }, { projection: RECORD_PROJECTION });
      return found?.clientId === clientId ? recordOf(found) : undefined;
    },

    createAccount(account, outbox) {
      const document = { id: account.accountId, kind: 'recipient-account', what: 'recipient account' };
      return write(account.accountId, () =>
        insertNewOfKind(accounts, document, { ...accountOf(account), ...keyFieldsOf(account) }, outbox),
      );
    },

    updateAccount(account, expectedRevision, outbox) {
      return write(account.accountId, async () => {
        const fields = { ...accountOf(account), ...keyFieldsOf(account) };
        return updateAtRevision(
          soleWriter,
          accounts,
          { id: account.accountId, match: { kind: 'recipient-account' }, expectedRevision, outbox },
          { $set: fields, ...unsetAbsent(fields, [...ACCOUNT_KEY_FIELDS, ...OPTIONAL_ACCOUNT_FIELDS]) },
        );
      });
    },

    async findAccount(accountId) {
      const found = await accounts.findOne<StoredRecipientAccount>(
        { _id: accountId, kind: 'recipient-account' },
        { projection: ACCOUNT_PROJECTION },
      );
      return found ? accountOf(found) : undefined;
    },

    async findAccountByKeyDigest(keyDigest) {
      // Two indexed equalities rather than an `$or`, which FerretDB 1.24 would evaluate over the whole collection.
      const found =
        (await accounts.findOne<StoredRecipientAccount>({ accountKeyDigest: keyDigest }, { projection: ACCOUNT_PROJECTION })) ??
        (await accounts.findOne<StoredRecipientAccount>({ accountPreviousKeyDigest: keyDigest }, { projection: ACCOUNT_PROJECTION })) ??
        (await accounts.findOne<StoredRecipientAccount>({ accountLeakedKeyDigest: keyDigest }, { projection: ACCOUNT_PROJECTION }));
      return found ? accountOf(found) : undefined;
    },

    async findByKeyDigest(keyDigest) {
      // Three indexed equalities, as for accounts: FerretDB 1.24 would evaluate an `$or` over the whole collection.
      for (const field of GRANT_KEY_FIELDS) {
        const found = await authorizations.findOne<StoredAuthorization>({ [field]: keyDigest }, { projection: RECORD_PROJECTION });
        if (found) return recordOf(found);
      }
      return undefined;
    },

    async list(organizationId) {
      const found = await authorizations
        .find<StoredAuthorization>({ organizationId }, { projection: RECORD_PROJECTION, sort: { createdAt: -1, _id: 1 } })
        .toArray();
      return found.map(recordOf);
    },

    async findByClaimToken(tokenDigest) {
      const found = await authorizations.findOne<StoredAuthorization>({ claimTokenDigest: tokenDigest }, { projection: RECORD_PROJECTION });
      return found ? recordOf(found) : undefined;
    },

    findDueForExpiry: (now, limit) => findDue('pendingExpiryAt', now, limit),

    findDueForExpiryNotice: (now, limit) => findDue('pendingNoticeAt', now, limit),

    async listOffers(accountId, { limit, before }) {
      if (limit <= 0) return [];
      const found = await authorizations
        .find<StoredAuthorization>(
          { offerAwaitingAccountId: accountId, ...(before === undefined ? {} : { _id: { $lt: before } }) },
          { projection: RECORD_PROJECTION, sort: { _id: -1 }, limit },
        )
        .toArray();
      return found.map(recordOf);
    },

    async pendingOutbox(limit) {
      if (limit <= 0) return [];
      // `outbox.0` also excludes a flag left set by an earlier version's crash between markPublished's two writes.
      const owing = await authorizations
        .find({ hasOutbox: true, 'outbox.0': { $exists: true } }, { projection: { outbox: 1 }, sort: { createdAt: 1, _id: 1 }, limit })
        .toArray();
      return owing.map((found): PendingOutbox => ({ clientId: found._id, entries: found.outbox.map(entryOf) }));
    },

    markPublished(clientId, entryIds) {
      if (entryIds.length === 0) return Promise.resolve();
      // At least once: when other writers keep the document's next write past every try, the entries
      // stay owed and the relay's next pass publishes them again.
      return write(clientId, async () => {
        await soleWriter(
          clientId,
          async () => {
            const stored = await authorizations.findOne({ _id: clientId }, { projection: { outbox: 1, writeSeq: 1 } });
            return stored?.outbox.some((entry) => entryIds.includes(entry.id)) ? stored : undefined;
          },
          async (stored, sequence) => {
            // The sole writer of this sequence number: the outbox read is the outbox written over, so
            // one write sets what is left and its flag together.
            const left = stored.outbox.filter((entry) => !entryIds.includes(entry.id)).map(entryOf);
            const result = await authorizations.updateOne(
              { _id: clientId, ...sequence.filter },
              { $set: { outbox: left, hasOutbox: left.length > 0, ...sequence.set } },
            );
            return result.matchedCount === 1;
          },
        );
      });
    },

    async close() {
      closed = true;
      await writes.idle();
    },
  });
}

function documentOf(record: StoredAuthorization, outbox: readonly OutboxEntry[]): AuthorizationDocument {
  const pendingExpiryAt = pendingExpiryOf(record);
  return {
    _id: record.clientId,
    ...recordOf(record),
    ...grantKeyFieldsOf(record),
    ...offerFieldOf(record),
    ...outboxFieldsOf(outbox),
    ...(pendingExpiryAt === undefined ? {} : { pendingExpiryAt, pendingNoticeAt: pendingNoticeOf(record) }),
  };
}

/**
 * The two start-up migrations below write without a write claim: each runs once per database, on
 * documents no current code writes without the field it adds, so no claimed write races them.
 *
 * Decision 44: records written before expiry notices existed have an expiry ahead but no
 * `pendingNoticeAt`; each gets its first notice's time (7 days before), once. Only records with an
 * expiry ahead are read (the sparse index), in pages, each page one bulkWrite.
 */
async function indexEarlierExpiryNotices(db: Db): Promise<void> {
  const authorizations = db.collection<AuthorizationDocument>(AUTHORIZATIONS_COLLECTION);
  const earlier = authorizations.find(
    { pendingExpiryAt: { $exists: true }, pendingNoticeAt: { $exists: false } },
    { projection: { _id: 1, pendingExpiryAt: 1 } },
  );
  let page: { updateOne: { filter: object; update: object } }[] = [];
  const flush = async () => {
    if (page.length > 0) await authorizations.bulkWrite(page, { ordered: false });
    page = [];
  };
  for await (const document of earlier) {
    if (!document.pendingExpiryAt) continue;
    const firstNotice = new Date(Date.parse(document.pendingExpiryAt) - FIRST_NOTICE_MS).toISOString();
    page.push({
      updateOne: { filter: { _id: document._id, pendingNoticeAt: { $exists: false } }, update: { $set: { pendingNoticeAt: firstNotice } } },
    });
    if (page.length >= 500) await flush();
  }
  await flush();
}

/** The first notice before an expiry (7 days), for records of an earlier version. */
const FIRST_NOTICE_MS = 7 * 86_400_000;

function pendingNoticeOf(record: StoredAuthorization): string {
  return nextExpiryNoticeAt(record) ?? NO_NOTICE_LEFT;
}

/** Sets the record's fields (`updateAtRevision` appends what the change owes, in the same single-document update). */
function changeTo(record: StoredAuthorization): UpdateFilter<AuthorizationDocument> {
  const pendingExpiryAt = pendingExpiryOf(record);
  const keys = grantKeyFieldsOf(record);
  const offer = offerFieldOf(record);
  const absent = [
    ...GRANT_KEY_FIELDS.filter((field) => keys[field] === undefined),
    ...(pendingExpiryAt === undefined ? ['pendingExpiryAt', 'pendingNoticeAt'] : []),
    ...(offer.offerAwaitingAccountId === undefined ? ['offerAwaitingAccountId'] : []),
  ];
  return {
    $set: {
      ...recordOf(record),
      ...keys,
      ...offer,
      ...(pendingExpiryAt === undefined ? {} : { pendingExpiryAt, pendingNoticeAt: pendingNoticeOf(record) }),
    },
    ...(absent.length > 0 ? { $unset: Object.fromEntries(absent.map((field) => [field, ''])) } : {}),
  };
}

function offerFieldOf(record: StoredAuthorization): { offerAwaitingAccountId?: string } {
  const accountId = offerAwaitingAccountOf(record);
  return accountId === null ? {} : { offerAwaitingAccountId: accountId };
}

function pendingExpiryOf(record: StoredAuthorization): string | undefined {
  if (record.revokedAt !== null || record.expiredAt !== null || record.expiresAt === null) return undefined;
  return record.expiresAt;
}

/**
 * A fresh plain object with exactly the port's fields, whatever else the input carries. Records written
 * before rotation and allow lists existed lack some, and read back without them.
 */
function recordOf(record: StoredAuthorization): StoredAuthorization {
  const fields = RECORD_FIELDS.filter((field) => record[field] !== undefined).map((field) => {
    const value = record[field];
    return [field, Array.isArray(value) ? [...value] : value];
  });
  return Object.fromEntries(fields) as StoredAuthorization;
}

/** Optional fields, absent from accounts that never had them (decision 43's leaked key, decision 50's list): read back as written. */
const OPTIONAL_ACCOUNT_FIELDS: ReadonlySet<string> = new Set(['leakedKeyDigest', 'autoAcceptOrganizationIds']);

function accountOf(account: StoredRecipientAccount): StoredRecipientAccount {
  const fields = ACCOUNT_FIELDS.filter((field) => !OPTIONAL_ACCOUNT_FIELDS.has(field) || account[field] != null);
  return Object.fromEntries(
    fields.map((field) => {
      const value = account[field] ?? null;
      return [field, Array.isArray(value) ? [...value] : value];
    }),
  ) as unknown as StoredRecipientAccount;
}

/** A key's three digests (current, previous, leaked) under names that start with `P`, each present only when set. */
type KeyFields<P extends string> = Partial<Record<`${P}KeyDigest` | `${P}PreviousKeyDigest` | `${P}LeakedKeyDigest`, string>>;

function keyFieldsNamed<P extends string>(
  prefix: P,
  digests: { keyDigest?: string | null; previousKeyDigest?: string | null; leakedKeyDigest?: string | null },
): KeyFields<P> {
  const fields: Record<string, string> = {};
  if (digests.keyDigest) fields[`${prefix}KeyDigest`] = digests.keyDigest;
  if (digests.previousKeyDigest) fields[`${prefix}PreviousKeyDigest`] = digests.previousKeyDigest;
  if (digests.leakedKeyDigest) fields[`${prefix}LeakedKeyDigest`] = digests.leakedKeyDigest;
  return fields as KeyFields<P>;
}

/** An account's digests under the names the sparse indexes cover (an authorization's own `keyDigest` is not an account's). */
type AccountKeyFields = KeyFields<'account'>;

const ACCOUNT_KEY_FIELDS = ['accountKeyDigest', 'accountPreviousKeyDigest', 'accountLeakedKeyDigest'] as const;

const keyFieldsOf = (account: StoredRecipientAccount): AccountKeyFields => keyFieldsNamed('account', account);

/**
 * Decision 43: a grant's digests under names of their own, present only when set, so that each sparse
 * index holds only grants (an account document has a `keyDigest` of its own) and no null.
 */
type GrantKeyFields = KeyFields<'grant'>;

const GRANT_KEY_FIELDS = ['grantKeyDigest', 'grantPreviousKeyDigest', 'grantLeakedKeyDigest'] as const;

const grantKeyFieldsOf = (record: StoredAuthorization): GrantKeyFields => keyFieldsNamed('grant', record);

/** Where the store notes what it has done once to a database (a collection of its own: no query of the authorizations sees it). */
const MIGRATIONS_COLLECTION = 'authorization_store_migrations';
const GRANT_KEYS_MIGRATION = 'grant-key-digests';

/**
 * Grants written before decision 43 have their digests under the record's names only: each gets the
 * indexed copies, once per database (a note in MIGRATIONS_COLLECTION says it is done, so a start does
 * not read the whole collection again). Idempotent, should two processes start at once.
 */
async function indexKeysOfEarlierGrants(db: Db, authorizations: Collection<AuthorizationDocument>): Promise<void> {
  const migrations = db.collection<{ _id: string; at: string }>(MIGRATIONS_COLLECTION);
  if (await migrations.findOne({ _id: GRANT_KEYS_MIGRATION })) return;
  const earlier = authorizations.find<StoredAuthorization & { _id: string }>(
    { clientId: { $exists: true }, keyDigest: { $type: 'string' }, grantKeyDigest: { $exists: false } },
    { projection: { _id: 1, keyDigest: 1, previousKeyDigest: 1, leakedKeyDigest: 1 } },
  );
  for await (const record of earlier) {
    await authorizations.updateOne({ _id: record._id, grantKeyDigest: { $exists: false } }, { $set: grantKeyFieldsOf(record) });
  }
  await migrations.updateOne({ _id: GRANT_KEYS_MIGRATION }, { $set: { at: new Date().toISOString() } }, { upsert: true });
}

/** `$unset` of the fields a write leaves out, so a digest that no longer applies leaves its index. */
function unsetAbsent(fields: object, names: readonly string[]): { $unset?: Record<string, ''> } {
  const absent = names.filter((name) => !(name in fields));
  return absent.length > 0 ? { $unset: Object.fromEntries(absent.map((name) => [name, ''] as const)) } : {};
}

export { WRITE_CLAIMS_COLLECTION } from './write-claims';
