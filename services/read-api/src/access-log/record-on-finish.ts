import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { RATE_LIMITED_CODE, type AccessRecord, type AccessResource } from '@rsd/contracts';
import { errorCodeOf, requestIdOf } from '@rsd/platform';
import type { Clock } from '@rsd/ports';
import type { CustomerResource } from '../customers/customer-resources';

export type RecordAccess = (record: AccessRecord) => void;

const RESOURCE_NAMES: Record<CustomerResource, AccessResource> = { score: 'score', pillars: 'pillars', scoreHistory: 'history' };

/**
 * Decision 21: once the credential lookup found the authorization, whatever the answer turns out to
 * be (a success, a 304, a refusal, a 429) is recorded when it is finished, with the code the error
 * handler wrote. Only fields the read API decides are taken: never a header, the key or the query.
 * `at` is when the answer went out, so one process records in time order.
 */
export function recordOnFinish(
  req: Request,
  res: Response,
  fields: { clientId: string; resource: CustomerResource },
  record: RecordAccess,
  clock: Clock,
): void {
  res.once('finish', () => {
    record({
      id: randomUUID(),
      clientId: fields.clientId,
      at: clock.now().toISOString(),
      resource: RESOURCE_NAMES[fields.resource],
      status: res.statusCode,
      code: errorCodeOf(res) ?? (res.statusCode === 429 ? RATE_LIMITED_CODE : null),
      clientAddress: req.ip ?? null,
      requestId: requestIdOf(res) ?? 'none',
    });
  });
}
