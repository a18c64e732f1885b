import type { Request, Response } from 'express';
import type { PortfolioCertificatesPage } from '@rsd/contracts';
import { scoreHistoryView, type ScoreView } from '@rsd/domain';
import { ApiError } from '@rsd/platform';
import type { ViewStore } from '@rsd/ports';
import type { PortfolioQuery } from '@rsd/recipient-access';
import type { ReadPipeline, Reader } from '../pipeline/read-pipeline';
import { readableGrants, type PortfolioReader } from '../portfolio/portfolio-pages';
import { noteCertificateRead } from '../access-log/record-on-finish';
import { asOfOf } from './as-of';
import { certificateOf, certificateSigner } from './issue-certificate';

const PDF_CONTENT_TYPE = 'application/pdf';

/**
 * The score that was the latest on asOf: the one with the greatest scoreDate not after it (on the
 * day of a score, that score). One bounded read of the organization's history, newest first, in the
 * history's (partition, sort key) index on every view store.
 */
export async function scoreAsOf(views: ViewStore, organizationId: string, asOf: string): Promise<ScoreView | undefined> {
  const [score] = await views.list(scoreHistoryView, organizationId, { limit: 1, atMost: asOf });
  return score;
}

/**
 * `GET /v1/customers/{clientId}/certificate` (decision 55): `{ certificate, jws }`, or with
 * `Accept: application/pdf` the same certificate as a one-page PDF. Either is signed as every read
 * is (decision 24), and the JWS inside it stands alone.
 */
export function certificateServer(pipeline: ReadPipeline) {
  const sign = certificateSigner(pipeline.signingKeys);
  return async (req: Request, res: Response, { clientId, organizationId, credential }: Reader): Promise<void> => {
    const now = pipeline.clock.now();
    const asOf = asOfOf(req, now);
    const wantsPdf = req.accepts(['application/json', PDF_CONTENT_TYPE]) === PDF_CONTENT_TYPE;
    noteCertificateRead(res, { asOf, format: wantsPdf ? 'pdf' : 'json' });
    res.setHeader('Vary', 'Accept');
    const score = await scoreAsOf(pipeline.views, organizationId, asOf);
    if (!score) throw new ApiError('SCORE_NOT_FOUND', `No score had been calculated for this customer by ${asOf}`);
    const signed = await sign(certificateOf({ clientId, credential, score, asOf, issuedAt: now }));
    if (wantsPdf) {
      // pdf-lib, its fonts and the QR code's encoder (1.4 MB of code) load on the first PDF asked for, not into every
      // read API's memory at its start.
      const { certificatePdf } = await import('./certificate-pdf.js');
      pipeline.sendBytes(req, res, await certificatePdf(signed), PDF_CONTENT_TYPE);
    } else pipeline.send(req, res, signed, undefined, { once: true });
  };
}

/**
 * `GET /v1/portfolio/certificates?asOf=` (decision 55): the certificate of every grant of the page
 * that holds qr_score, may be read from the caller's address, and had a score on asOf. One history
 * read per organization of the page (a page holds at most 100 grants), all at once.
 */
export async function certificatesPage(
  pipeline: ReadPipeline,
  req: Request,
  res: Response,
  reader: PortfolioReader,
  query: PortfolioQuery,
): Promise<PortfolioCertificatesPage> {
  const asOf = asOfOf(req, reader.now);
  noteCertificateRead(res, { asOf, format: 'json' });
  const { readable, nextCursor, leftOut } = await readableGrants(pipeline.views, reader, query, 'qr_score');
  const organizations = [...new Set(readable.map(({ credential }) => credential.organizationId))];
  const scores = new Map(await Promise.all(organizations.map(async (id) => [id, await scoreAsOf(pipeline.views, id, asOf)] as const)));
  const sign = certificateSigner(pipeline.signingKeys);
  const items = await Promise.all(
    readable.flatMap(({ grant, credential }) => {
      const score = scores.get(credential.organizationId);
      if (!score) return [];
      const certificate = certificateOf({ clientId: grant.clientId, credential, score, asOf, issuedAt: reader.now });
      return [sign(certificate).then((signed) => ({ clientId: grant.clientId, ...signed }))];
    }),
  );
  return { items, nextCursor, leftOut };
}
