import { join } from 'node:path';
import type { AccessRecord } from '@rsd/contracts';
import {
  memoryRateLimitStores,
  openSqliteAccessLogStore,
  openSqliteAuditLogStore,
  openSqliteOffboardingStore,
  openSqliteSubjectKeyStore,
  SUBJECT_KEYS_DATABASE,
} from '@rsd/embedded';
import {
  consoleClientAddressVerifier,
  CONSOLE_AUDIENCES,
  createLogger,
  createTokenVerifier,
  loadConfig,
  signingKeyListSchema,
  signingKeysFrom,
  SIGNING_KEYS_SECRET,
  withConsoleTokens,
  type ConsoleKeySource,
  createOutboxRelay,
  secretScanningKeys,
  type Logger,
  type OutboxRelay,
} from '@rsd/platform';
import type { AccessLogStore, AuditLogStore, AuthorizationStore, EventLog, OffboardingStore, SubjectKeyStore } from '@rsd/ports';
import { anAccessRecord as aTestkitAccessRecord, startApp, TEST_JWT_SECRET, type RunningApp } from '@rsd/testkit';
import { openEmbeddedStores } from '../../libs/embedded/src/testing/temp-database';
import { buildApp, type CredentialsAppDeps } from '../../services/credentials/src/app';
import { AUDITED_TOPICS, auditProjection } from '../../services/credentials/src/audit-log/audit-projection';
import { credentialsConfigSchema } from '../../services/credentials/src/config';
import { ERASURE_TOPICS, erasureFeed } from '../../services/credentials/src/erasure/erasure-feed';

/** Where the harness's clock stands until a test moves it. */
export const NOW = new Date('2026-11-20T10:00:00.000Z');

export interface SettableClock {
  now(): Date;
  set(time: Date): void;
}

export interface CredentialsHarnessOptions {
  /** Stands in front of the event log the service writes to (a faulty one, say); `eventLog` is then this one. */
  wrapEventLog?: (eventLog: EventLog) => EventLog;
  /** Stands in front of the store the service uses; `store` stays the real one. */
  wrapStore?: (store: AuthorizationStore) => AuthorizationStore;
  /** Where the service logs (default: nowhere). */
  log?: Logger;
  /** Decision 38's per-address counters; default: a store of its own per limiter. */
  rateLimitStores?: CredentialsAppDeps['rateLimitStores'];
  /** Configuration besides the token secret. */
  env?: Record<string, string>;
  /**
   * Decision 51: the console's public keys (its tokens then act for its people) and its URL (where the
   * old console and claim pages redirect); without them the service knows no console.
   */
  console?: { keys: ConsoleKeySource; url?: string };
}

export interface CredentialsHarness {
  app: RunningApp;
  /** The temp dir that holds every byte the adapters write. */
  dir: string;
  store: AuthorizationStore;
  accessLog: AccessLogStore;
  /** Decision 54's audit view, which the harness keeps current from the event log as the service's module does. */
  auditLog: AuditLogStore;
  eventLog: EventLog;
  relay: OutboxRelay;
  /** Decision 56: the offboardings' records, kept current by the erasure feed as the service's module does, and the subjects' keys. */
  offboardings: OffboardingStore;
  subjectKeys: SubjectKeyStore;
  clock: SettableClock;
  log: Logger;
  close(): Promise<void>;
}

/** The real credentials app over the real embedded adapters in a temp dir, on a clock the test holds. */
export async function startCredentials(options: CredentialsHarnessOptions = {}): Promise<CredentialsHarness> {
  const stores = await openEmbeddedStores();
  const { store } = stores;
  const eventLog = options.wrapEventLog ? options.wrapEventLog(stores.eventLog) : stores.eventLog;
  const log = options.log ?? createLogger('credentials', 'silent');
  const relay = createOutboxRelay({ store, eventLog, log });
  let current = NOW;
  const clock: SettableClock = {
    now: () => current,
    set: (time) => {
      current = time;
    },
  };
  const config = loadConfig(credentialsConfigSchema, { JWT_HS256_SECRET: TEST_JWT_SECRET, ...options.env });
  const accessLog = openSqliteAccessLogStore({ file: join(stores.dir, 'access-log.sqlite') });
  const auditLog = openSqliteAuditLogStore({ file: join(stores.dir, 'rsd.sqlite') });
  const auditFeed = await stores.eventLog.subscribe({
    groupId: 'credentials-audit',
    topics: AUDITED_TOPICS,
    fromBeginning: true,
    ...auditProjection(auditLog, log),
  });
  const offboardings = openSqliteOffboardingStore({ file: join(stores.dir, 'rsd.sqlite') });
  const subjectKeys = openSqliteSubjectKeyStore({ file: join(stores.dir, SUBJECT_KEYS_DATABASE) });
  const purges = await stores.eventLog.subscribe({
    groupId: 'credentials-erasure',
    topics: ERASURE_TOPICS,
    fromBeginning: true,
    ...erasureFeed({ eventLog: stores.eventLog, store, accessLog, auditLog, offboardings, clock, log }),
  });
  const app = await startApp(
    buildApp({
      config,
      store: options.wrapStore ? options.wrapStore(store) : store,
      accessLog,
      auditLog,
      relay,
      eventLog,
      offboardings,
      subjectKeys,
      clock,
      log,
      verifyToken: withConsoleTokens(createTokenVerifier(config), options.console?.keys, CONSOLE_AUDIENCES.credentials),
      rateLimitStores: options.rateLimitStores ?? memoryRateLimitStores,
      secretScanningKeys: secretScanningKeys({ url: config.SECRET_SCANNING_KEYS_URL, clock, log }),
      signingKeys: await signingKeysFrom(signingKeyListSchema.parse(JSON.parse(SIGNING_KEYS_SECRET.generate()))),
      console: options.console && { url: options.console.url, addressFromConsole: consoleClientAddressVerifier(options.console.keys) },
    }),
  );
  return {
    app,
    dir: stores.dir,
    store,
    accessLog,
    auditLog,
    eventLog,
    relay,
    offboardings,
    subjectKeys,
    clock,
    log,
    close: async () => {
      await app.close();
      await relay.stop();
      await purges.close();
      await auditFeed.close();
      await offboardings.close();
      await subjectKeys.close();
      await auditLog.close();
      await accessLog.close();
      await stores.close();
    },
  };
}

/** The testkit's access record, but `agoMs` before the harness's NOW; its request id grows with each call. */
export function anAccessRecord(clientId: string, agoMs: number, overrides: Partial<AccessRecord> = {}): AccessRecord {
  return aTestkitAccessRecord(clientId, 0, { at: new Date(NOW.getTime() - agoMs).toISOString(), ...overrides });
}
