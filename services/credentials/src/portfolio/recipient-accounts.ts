import { ACCOUNT_KEY_OVERLAP_SECONDS, ACCOUNT_KEY_PREFIX, rotateAccountKeyRequestSchema, type RotatedAccountKey } from '@rsd/contracts';
import {
  accountKeyMatch,
  decideRotateAccountKey,
  digestApiKey,
  generateApiKey,
  generateClientId,
  hasValidChecksum,
  newRecipientAccount,
  recipientAccountCreated,
  type KeyMatch,
  type StoredRecipientAccount,
} from '@rsd/domain';
import { ApiError, issueDetails, requestErrorMap, validationFailed, type Publication, runCommand } from '@rsd/platform';
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

/**
 * Who the account key says is calling: the key's checksum first (a mistyped key is refused without a
 * lookup), then the account found by the key's digest, whose current or overlapping key must verify
 * in constant time (an index is never the only check); the answer says which of the two it was.
 */
export async function authenticateAccount(deps: Pick<UseCaseDeps, 'store' | 'clock'>, apiKey: string): Promise<AuthenticatedAccountKey> {
  if (apiKey === '') throw new ApiError('MISSING_API_KEY', 'The x-api-key header with the recipient account key is required');
  if (!hasValidChecksum(apiKey, ACCOUNT_KEY_PREFIX)) throw new ApiError('INVALID_API_KEY', INVALID_ACCOUNT_KEY);
  const account = await deps.store.findAccountByKeyDigest(digestApiKey(apiKey));
  const key = account && accountKeyMatch(apiKey, account, deps.clock.now());
  if (!account || !key) throw new ApiError('INVALID_API_KEY', INVALID_ACCOUNT_KEY);
  return { account, key };
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
  const parsed = rotateAccountKeyRequestSchema.safeParse(body ?? {}, { error: requestErrorMap });
  if (!parsed.success) throw validationFailed(issueDetails(parsed.error.issues));
  return parsed.data.overlapSeconds ?? ACCOUNT_KEY_OVERLAP_SECONDS.default;
}
