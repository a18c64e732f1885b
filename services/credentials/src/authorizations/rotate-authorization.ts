import { DEFAULT_OVERLAP_SECONDS, rotateAuthorizationRequestSchema, type RotatedAuthorization } from '@rsd/contracts';
import { decideRotate, digestApiKey } from '@rsd/domain';
import { ApiError, parsedBody, runCommand, type Publication } from '@rsd/platform';
import { findOwnAuthorization, withUsage } from './find-authorizations';
import type { CredentialGenerator, UseCaseDeps } from './use-case-deps';

export interface Rotation {
  rotated: RotatedAuthorization;
  /** Decision 29's honesty: `pending` until the Rotated event is in the log (the new key does not work before it does). */
  publication: Publication;
}

/**
 * Decision 19: a new key for the same Client ID, scopes and expiry; the previous key keeps working
 * for the overlap. Like create, the raw key exists only here, digested at once and returned once.
 */
export async function rotateAuthorization(
  deps: UseCaseDeps,
  generate: Pick<CredentialGenerator, 'apiKey'>,
  organizationId: string,
  clientId: string,
  body: unknown,
): Promise<Rotation> {
  const overlapSeconds = overlapOf(body);
  const { answer, publication } = await runCommand(deps, deps.origin, {
    what: 'rotation',
    context: { organizationId, clientId },
    load: () => findOwnAuthorization(deps.store, organizationId, clientId),
    decide: (current) => {
      // A write that loses is decided again, with a new key: the one made here never left this function.
      const apiKey = generate.apiKey();
      const decision = decideRotate(
        current,
        { newKeyDigest: digestApiKey(apiKey), overlapSeconds },
        { id: deps.newEventId(), time: deps.clock.now() },
      );
      if (decision.outcome === 'unclaimed') {
        throw new ApiError(
          'KEY_NOT_CLAIMED',
          'The key of this authorization waits to be claimed by its recipient; issue a new claim link instead of a key',
        );
      }
      if (decision.outcome === 'heldByAccount') {
        throw new ApiError(
          'KEY_HELD_BY_ACCOUNT',
          "This grant is read with its recipient account's key (an offered grant, once the account accepts it) and has no key of its own; the account rotates its key",
        );
      }
      if (decision.outcome !== 'changed') {
        throw new ApiError(
          'AUTHORIZATION_INACTIVE',
          'The authorization has been revoked or has expired; a new key cannot be issued for it',
        );
      }
      return {
        write: { authorization: decision.record, expectedRevision: current.revision, events: [decision.event] },
        answer: { record: decision.record, apiKey },
      };
    },
  });
  const rotated = {
    ...(await withUsage(deps, answer.record, deps.clock.now())),
    apiKey: answer.apiKey,
    previousKeyExpiresAt: answer.record.previousKeyExpiresAt ?? null,
  };
  return { rotated, publication: publication ?? 'pending' };
}

/** The body is optional: none, or `{}`, means the default overlap of a day. */
function overlapOf(body: unknown): number {
  return parsedBody(rotateAuthorizationRequestSchema, body ?? {}).overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
}
