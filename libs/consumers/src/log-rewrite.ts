import { SEALED_ATTRIBUTE, SEALED_MEMBER } from '@rsd/contracts';
import { sealValue, UnsealableEventError, type EventCipher } from './sealed-events';

/**
 * What rewriting a log written before sealing (decision 56) does with one record:
 * - `sealed`: an event in clear, now in its sealed form;
 * - `erased`: the same, but a subject it names was already erased: its fields are left out, as
 *   `sealValue` writes any event for an erased subject (an offboarded organization's event then reads as erased);
 * - `already-sealed`: written sealed (`rsdsealed`), kept as it is;
 * - `nothing-to-seal`: no declared field to seal (an erasure event, a record that is not an event), kept;
 * - `unsealable`: an event of a declared type naming no subject for the fields it holds, kept as it is
 *   (no key can be chosen for it; the report names where it is).
 */
export type RewriteOutcome = 'sealed' | 'erased' | 'already-sealed' | 'nothing-to-seal' | 'unsealable';

export const REWRITE_OUTCOMES: readonly RewriteOutcome[] = ['sealed', 'erased', 'already-sealed', 'nothing-to-seal', 'unsealable'];

export type RewriteCounts = Record<RewriteOutcome, number>;

export const noRewrites = (): RewriteCounts => ({ sealed: 0, erased: 0, 'already-sealed': 0, 'nothing-to-seal': 0, unsealable: 0 });

/** Whether the outcome changed the record's value (it must be written again). */
export const rewrites = (outcome: RewriteOutcome): boolean => outcome === 'sealed' || outcome === 'erased';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function parsed(value: string): unknown {
  if (!value.startsWith('{')) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A record's value as a log written since sealing would hold it. A dead letter (`deadLetter`) keeps
 * the record it could not use in its `value`, as that record was written: that inner value is
 * rewritten the same way, the letter's reason and position kept.
 */
export async function rewrittenValue(
  value: string,
  cipher: EventCipher,
  options: { deadLetter?: boolean } = {},
): Promise<{ outcome: RewriteOutcome; value: string }> {
  const json = parsed(value);
  if (options.deadLetter) {
    if (!isObject(json) || typeof json.value !== 'string') return { outcome: 'nothing-to-seal', value };
    const inner = await rewrittenValue(json.value, cipher);
    return rewrites(inner.outcome)
      ? { outcome: inner.outcome, value: JSON.stringify({ ...json, value: inner.value }) }
      : { ...inner, value };
  }
  if (isObject(json) && SEALED_ATTRIBUTE in json) return { outcome: 'already-sealed', value };
  let sealed: string;
  try {
    sealed = await sealValue(value, cipher);
  } catch (error) {
    // A subject id the cipher refuses (a space, too long) is the record's fault too; a key store away is not.
    if (error instanceof UnsealableEventError || error instanceof TypeError) return { outcome: 'unsealable', value };
    throw error;
  }
  if (sealed === value) return { outcome: 'nothing-to-seal', value };
  const parts = (JSON.parse(sealed) as { data: Record<string, unknown> }).data[SEALED_MEMBER] as { erased?: boolean }[];
  return { outcome: parts.some((part) => part.erased === true) ? 'erased' : 'sealed', value: sealed };
}

/**
 * A cipher that seals nothing and touches no key store: `rewrittenValue` with it tells whether a record
 * would be rewritten (`sealed`) without making a key or spending an encryption, to find whether a log
 * needs rewriting at all.
 */
export const probingCipher: EventCipher = {
  seal: (subject) => probingCipher.sealJson(subject, ''),
  sealJson: (subject) => Promise.resolve({ status: 'sealed', sealed: { v: 1, subject, nonce: '', ciphertext: '' } }),
  open: () => Promise.reject(new Error('the probing cipher opens nothing')),
  forget: () => undefined,
};
