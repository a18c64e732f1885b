import { randomUUID } from 'node:crypto';
import { RECIPIENT_TYPES, type Scope } from '@rsd/contracts';
import { createAuthorization } from '@rsd/credentials/dist/authorizations/create-authorization';
import type { CredentialGenerator, UseCaseDeps } from '@rsd/credentials/dist/authorizations/use-case-deps';
import { generateApiKey, generateClientId, type StoredAuthorization } from '@rsd/domain';
import { createLogger } from '@rsd/platform';
import type { AuthorizationStore, OutboxEntry } from '@rsd/ports';

/** An authorization as the credentials service makes it: the record, its Created event, and the key shown once. */
export interface MadeAuthorization {
  record: StoredAuthorization;
  created: OutboxEntry;
  apiKey: string;
}

/** The shipped CLIENT_ID_PREFIX and API_KEY_PREFIX, which the product the bench starts keeps. */
const CLIENT_ID_PREFIX = 'rs';
const API_KEY_PREFIX = 'rsk';

/**
 * Runs the create use case itself, the one behind POST …/authorizations: the same validation, Client
 * ID and key generation, SHA-256 digest, record and AuthorizationCreated event. Only its surroundings
 * are replaced: a clock set per call (records created over two years), a store that hands back what
 * the use case stored, and a relay with nothing to publish (the bench writes the event itself).
 */
export function authorizationFactory(): (organizationId: string, body: unknown, now: Date) => Promise<MadeAuthorization> {
  let clock = new Date();
  let stored: { record: StoredAuthorization; outbox: readonly OutboxEntry[] } | undefined;
  const take = () => {
    const taken = stored;
    stored = undefined;
    return taken;
  };
  // `create` is the one store method the create use case calls.
  const store: Pick<AuthorizationStore, 'create'> = {
    create: (record, outbox) => {
      stored = { record, outbox };
      return Promise.resolve();
    },
  };
  const deps: UseCaseDeps = {
    store: store as AuthorizationStore,
    usage: { usage: () => Promise.resolve(new Map()) },
    relay: { flush: () => Promise.resolve() },
    clock: { now: () => clock },
    log: createLogger('bench-scale', 'silent'),
    publishDeadlineMs: Infinity,
    newEventId: randomUUID,
  };
  const generate: CredentialGenerator = {
    clientId: () => generateClientId(CLIENT_ID_PREFIX),
    apiKey: () => generateApiKey(API_KEY_PREFIX),
    claimToken: () => {
      throw new Error('the scale benchmark delivers keys in the response');
    },
  };
  return async (organizationId, body, now) => {
    clock = now;
    take();
    const answer = await createAuthorization(deps, generate, organizationId, body, 'http://localhost');
    if (!('apiKey' in answer)) throw new Error('the scale benchmark delivers keys in the response');
    const { apiKey } = answer;
    const made = take();
    const created = made?.outbox[0];
    if (!made || !created || made.outbox.length !== 1) throw new Error('the create use case did not store one record with its event');
    return { record: made.record, created, apiKey };
  };
}

const SCOPE_SETS: Scope[][] = [
  ['qr_score'],
  ['qr_score', 'pillar_breakdown'],
  ['qr_score', 'pillar_breakdown', 'score_trend'],
  ['score_trend', 'qr_score'],
];

const DAY_MS = 86_400_000;

/**
 * The body an administrator would post for authorization `index`: every recipient type and several
 * scope sets; most name their recipient, a fifth expire one to three years from now (never during the
 * run, so the expiry scheduler has nothing to do), a tenth are limited to address ranges. The readers,
 * whose keys the bench keeps, may read /score and /pillars from anywhere and never expire.
 */
export function createRequestOf(index: number, reader: boolean, today: Date): Record<string, unknown> {
  if (reader)
    return { recipientType: 'insurance_provider', recipientName: `Scale bench reader ${index}`, scopes: ['qr_score', 'pillar_breakdown'] };
  const recipientType = RECIPIENT_TYPES[index % RECIPIENT_TYPES.length]!;
  return {
    recipientType,
    ...(index % 5 !== 4 ? { recipientName: `${recipientType.replace('_', ' ')} ${index}` } : {}),
    scopes: SCOPE_SETS[index % SCOPE_SETS.length]!,
    ...(index % 5 === 0 ? { expiresAt: new Date(today.getTime() + (365 + (index % 730)) * DAY_MS).toISOString().slice(0, 10) } : {}),
    ...(index % 10 === 3 ? { allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] } : {}),
  };
}
