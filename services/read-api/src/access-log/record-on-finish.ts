import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Response } from 'express';
import { RATE_LIMITED_CODE, type AccessRecord, type AccessResource } from '@rsd/contracts';
import { errorCodeOf, requestIdOf } from '@rsd/platform';
import type { Clock } from '@rsd/ports';
import type { CustomerResource } from '../customers/customer-resources';

export type RecordAccess = (record: AccessRecord) => void;

const RESOURCE_NAMES: Record<CustomerResource, AccessResource> = { score: 'score', pillars: 'pillars', scoreHistory: 'history' };

/** Record ids: 64 random bits per read API, then a count. Unique across replicas and restarts, and cheaper than a UUID per read. */
export function accessRecordIds(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let sequence = 0;
  return () => `${prefix}-${(sequence += 1).toString(36)}`;
}

/**
 * Decision 21: once the credential lookup found the authorization, whatever the answer turns out to
 * be (a success, a 304, a refusal, a 429) is recorded when it is finished, with the code the error
 * handler wrote. Only fields the read API decides are taken: never a header, the key or the query.
 * `at` is when the answer went out, so one process records in time order.
 */
export function recordOnFinish(
  res: Response,
  fields: { clientId: string; resource: CustomerResource; clientAddress: string | undefined },
  deps: { record: RecordAccess; clock: Clock; nextId: () => string; isoOf: (epochMs: number) => string },
): void {
  // With more trusted hops than there are proxies, req.ip is whatever the client wrote in X-Forwarded-For: only an address is kept.
  const clientAddress = fields.clientAddress !== undefined && isIP(fields.clientAddress) !== 0 ? fields.clientAddress : null;
  res.on('finish', () => {
    deps.record({
      id: deps.nextId(),
      clientId: fields.clientId,
      at: deps.isoOf(deps.clock.now().getTime()),
      resource: RESOURCE_NAMES[fields.resource],
      status: res.statusCode,
      code: errorCodeOf(res) ?? (res.statusCode === 429 ? RATE_LIMITED_CODE : null),
      clientAddress,
      requestId: requestIdOf(res) ?? 'none',
    });
  });
}
