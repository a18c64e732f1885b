import type { KeyMatch } from '@rsd/domain';
import { ApiError } from '@rsd/platform';

/** The message of every KEY_READ_ONLY answer: what happened and what to do. */
export const KEY_READ_ONLY_MESSAGE = 'This key was replaced by a rotation and only reads until its overlap ends; use the current key';

/**
 * Decision 50: only the current key manages. The previous key of a rotation's overlap (a grant's or
 * an account's) keeps reading and nothing else, so a key rotated out, possibly because it leaked,
 * cannot rotate again, release a grant or touch a webhook. Called after authentication, the allow
 * list and the rate limit (an authenticated caller is told); a caller without a key (an
 * organization's token) passes.
 */
export function requireCurrentKey(caller: { readonly key?: KeyMatch | undefined }): void {
  if (caller.key === 'previous') throw new ApiError('KEY_READ_ONLY', KEY_READ_ONLY_MESSAGE);
}
