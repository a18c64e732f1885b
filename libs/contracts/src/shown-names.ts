import { z } from 'zod';

/**
 * The characters a name shown to people may not hold: control characters (Unicode Cc: C0, DEL and
 * C1; a NUL byte, a newline, an escape) and format characters (Cf), among them the bidirectional
 * controls U+202A–U+202E and U+2066–U+2069, which make a name read in another order than it is
 * stored (`Acme\u202Ekcab` shows as "Acmeback"), and the invisible ones (U+200B–U+200F, U+2060–U+2064,
 * U+FEFF), which make two names look alike. Checked with Unicode's own classes, as the running
 * Node knows them.
 */
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;

/**
 * The same characters of the Basic Multilingual Plane as plain ranges, for the OpenAPI document: a
 * pattern there means the same whether a validator reads it with a `u` flag or not, which `\p{…}`
 * does not. The few format characters beyond the BMP (U+110BD, U+E0001 …) are named in the
 * description instead. shown-names.test.ts holds these ranges to Unicode's.
 */
export const SHOWN_NAME_PATTERN =
  '^[^\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e' +
  '\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb]*$';

export const SHOWN_NAME_REFUSAL = 'must not contain control or format characters (such as a right-to-left override or a zero-width space)';

/**
 * A name a client gives and people are shown (a grant's recipient, a recipient account): trimmed,
 * 1–200 characters, and none of the characters above (400 VALIDATION_FAILED naming the field).
 */
export function shownNameSchema(description: string) {
  return z
    .string()
    .trim()
    .min(1)
    .max(200)
    .refine((name) => !CONTROL_OR_FORMAT.test(name), SHOWN_NAME_REFUSAL)
    .meta({
      description: `${description}. No control characters and no format characters (Unicode Cc and Cf: bidirectional controls, zero-width characters, tags)`,
      pattern: SHOWN_NAME_PATTERN,
    });
}
