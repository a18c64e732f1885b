import type { RequestHandler, Response } from 'express';
import type { Publication } from './outbox-relay';

/** For administrative data, and answers that carry a secret: no cache, shared or the browser's, may keep them. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * Decision 29's answer to a change: once its event is in the event log, `status` with the body (204
 * without one); while the event is owed, 202 with the body and `enforcement: "pending"`.
 */
export function answerChange(res: Response, publication: Publication, body?: object, status = 200): void {
  if (publication === 'pending') res.status(202).json({ ...body, enforcement: 'pending' });
  else if (body === undefined) res.status(204).end();
  else res.status(status).json(body);
}
