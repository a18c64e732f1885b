import { ACCOUNT_KEY_OVERLAP_SECONDS, ACCOUNT_KEY_PREFIX, rotateAccountKeyRequestSchema, type RotatedAccountKey } from '@rsd/contracts';
import {
  decideRotateAccountKey,
  digestApiKey,
  generateApiKey,
  generateClientId,
  newRecipientAccount,
  recipientAccountCreated,
  type KeyMatch,
  type StoredRecipientAccount,
} from '@rsd/domain';
import { ApiError, parsedBody, runCommand, type Publication } from '@rsd/platform';
import { verifyAccountKey } from '@rsd/recipient-access';
import type { UseCaseDeps } from '../authorizations/use-case-deps';

/** Decision 42: `rcp_` ids and `rsa_` keys, made as Client IDs and API keys are (decisions 4–5). */
export interface AccountGenerator {
  accountId(): string;
  accountKey(): string;
}

export const accountGenerator: AccountGenerator = {
  accountId: () => generateClientId('rcp'),
  accountKey: () => generateApiKey(ACCOUNT_KEY_PREFIX),
};

const INVALID_ACCOUNT_KEY = 'The x-api-key header does not hold a valid recipient account key';

/** An account and which of its keys was presented (decision 50: the previous one only reads). */
export interface AuthenticatedAccountKey {
  account: StoredRecipientAccount;
  key: KeyMatch;
}

/** Who the account key says is calling, checked as the read API checks it, against this service's store. */
export function authenticateAccount(deps: Pick<UseCaseDeps, 'store' | 'clock'>, apiKey: string): Promise<AuthenticatedAccountKey> {
  return verifyAccountKey(apiKey, deps.clock.now(), (digest) => deps.store.findAccountByKeyDigest(digest));
}

/** A new account and its key, shown once by the caller; its Created event is owed with it. */
export async function openAccount(
  deps: UseCaseDeps,
  generate: AccountGenerator,
  name: string | null,
): Promise<{ account: StoredRecipientAccount; accountKey: string }> {
  const now = deps.clock.now();
  const accountKey = generate.accountKey();
  const account = newRecipientAccount({ accountId: generate.accountId(), name, keyDigest: digestApiKey(accountKey), now });
  // Published with the claim that opens it, which waits for the log.
  await runCommand(deps, deps.origin, {
    what: 'account opening',
    context: { accountId: account.accountId },
    publish: 'none',
    load: () => Promise.resolve(account),
    decide: (opened) => ({
      write: { account: opened, expectedRevision: null, events: [recipientAccountCreated(opened, { id: deps.newEventId(), time: now })] },
      answer: undefined,
    }),
  });
  return { account, accountKey };
}

/** Decision 42: a new account key, shown once; the old one keeps working for the overlap. */
export async function rotateAccountKey(
  deps: UseCaseDeps,
  generate: AccountGenerator,
  accountId: string,
  body: unknown,
): Promise<{ rotated: RotatedAccountKey; publication: Publication }> {
  const overlapSeconds = overlapOf(body);
  const { answer, publication } = await runCommand(deps, deps.origin, {
    what: 'account key rotation',
    context: { accountId },
    load: async () => {
      const current = await deps.store.findAccount(accountId);
      if (!current) throw new ApiError('INVALID_API_KEY', INVALID_ACCOUNT_KEY);
      return current;
    },
    decide: (current) => {
      const accountKey = generate.accountKey();
      const { account, event } = decideRotateAccountKey(
        current,
        { newKeyDigest: digestApiKey(accountKey), overlapSeconds },
        { id: deps.newEventId(), time: deps.clock.now() },
      );
      return {
        write: { account, expectedRevision: current.revision, events: [event] },
        answer: { accountKey, previousKeyExpiresAt: account.previousKeyExpiresAt },
      };
    },
  });
  deps.log.info({ accountId }, 'account key rotated');
  return { rotated: answer, publication: publication ?? 'pending' };
}

function overlapOf(body: unknown): number {
  return parsedBody(rotateAccountKeyRequestSchema, body ?? {}).overlapSeconds ?? ACCOUNT_KEY_OVERLAP_SECONDS.default;
}
