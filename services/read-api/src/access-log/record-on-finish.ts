import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Response } from 'express';
import { RATE_LIMITED_CODE, type AccessRecord, type AccessResource, type CertificateRead } from '@rsd/contracts';
import { errorCodeOf, requestIdOf } from '@rsd/platform';
import type { Clock } from '@rsd/ports';

export type RecordAccess = (record: AccessRecord) => void;

/**
 * Decision 55: a certificate handler names what it serves once the date is read, before it answers;
 * the record made when the answer is finished carries it. A refusal before then (a malformed date) has none.
 */
export function noteCertificateRead(res: Response, read: CertificateRead): void {
  res.locals.certificateRead = read;
}

/** What the recorder needs besides the answer: where records go, the time, ids, and the instant's text. */
export interface RecordingDeps {
  record: RecordAccess;
  clock: Clock;
  nextId: () => string;
  isoOf: (epochMs: number) => string;
}

/** Record ids: 64 random bits per read API, then a count. Unique across replicas and restarts, and cheaper than a UUID per read. */
export function accessRecordIds(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let sequence = 0;
  return () => `${prefix}-${(sequence += 1).toString(36)}`;
}

/**
 * Decision 21: once the credential lookup found the authorization (or a portfolio page found the
 * grants it serves), whatever the answer turns out to be (a success, a 304, a refusal, a 429) is
 * recorded for each of those grants when it is finished, with the code the error handler wrote. Only
 * fields the read API decides are taken: never a header, the key or the query. `at` is when the
 * answer went out, so one process records in time order. One finish listener, however many grants.
 */
export function recordOnFinish(
  res: Response,
  fields: { clientIds: readonly string[]; resource: AccessResource; clientAddress: string | undefined },
  deps: RecordingDeps,
): void {
  if (fields.clientIds.length === 0) return;
  // With more trusted hops than there are proxies, req.ip is whatever the client wrote in X-Forwarded-For: only an address is kept.
  const clientAddress = fields.clientAddress !== undefined && isIP(fields.clientAddress) !== 0 ? fields.clientAddress : null;
  res.on('finish', () => {
    const at = deps.isoOf(deps.clock.now().getTime());
    const code = errorCodeOf(res) ?? (res.statusCode === 429 ? RATE_LIMITED_CODE : null);
    const requestId = requestIdOf(res) ?? 'none';
    const certificate = res.locals.certificateRead as CertificateRead | undefined;
    for (const clientId of fields.clientIds) {
      deps.record({
        id: deps.nextId(),
        clientId,
        at,
        resource: fields.resource,
        status: res.statusCode,
        code,
        clientAddress,
        requestId,
        ...(certificate ? { certificate } : {}),
      });
    }
  });
}
