/**
 * What a data set holds. Organizations share their score with about ten recipients each (insurers,
 * auditors, regulators, partners), so N authorizations belong to N/10 organizations, ten apiece.
 * Each organization gets one score per day, the last day being yesterday, for as many days as it
 * takes to reach the data set's score-event count (10 days when there are as many scores as
 * authorizations). The bench's own ingest then posts today's scores, which become the latest.
 */
export interface DataSetShape {
  /** Column heading: "1k", "1M", "1M + 10M events". */
  name: string;
  authorizations: number;
  organizations: number;
  scoreEvents: number;
  /** Days of scores: the last one may be partial. */
  days: number;
}

export const AUTHORIZATIONS_PER_ORGANIZATION = 10;

/** The authorizations whose raw keys are kept, spread over the data set: the bench reads with them. */
export const READER_COUNT = 8;

/** Older dates would leave ISO 8601's four-digit years. */
const MAX_DAYS = 100 * 365;

export function shapeOf(authorizations: number, scoreEvents = authorizations): DataSetShape {
  const organizations = Math.max(1, Math.round(authorizations / AUTHORIZATIONS_PER_ORGANIZATION));
  const days = Math.ceil(scoreEvents / organizations);
  if (days > MAX_DAYS) {
    throw new Error(`${scoreEvents} score events over ${organizations} organizations is ${days} days of scores: use a larger size`);
  }
  const name =
    scoreEvents === authorizations ? formatCount(authorizations) : `${formatCount(authorizations)} + ${formatCount(scoreEvents)} events`;
  return { name, authorizations, organizations, scoreEvents, days };
}

export function describe(shape: DataSetShape): string {
  return (
    `${formatCount(shape.authorizations)} authorizations over ${formatCount(shape.organizations)} organizations, ` +
    `${formatCount(shape.scoreEvents)} score events (${shape.days} days)`
  );
}

/** Authorization `index` belongs to organization `index mod organizations`: ten apiece, created over time. */
export function organizationIndexOf(shape: DataSetShape, authorizationIndex: number): number {
  return authorizationIndex % shape.organizations;
}

export function organizationId(index: number): string {
  return `scale-org-${String(index).padStart(7, '0')}`;
}

export function readerIndexes(shape: DataSetShape): number[] {
  const count = Math.min(READER_COUNT, shape.authorizations);
  if (count === 1) return [0];
  return [...new Set(Array.from({ length: count }, (_, k) => Math.floor((k * (shape.authorizations - 1)) / (count - 1))))];
}

export function formatCount(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 100 === 0) return `${n / 1e3}k`;
  return String(n);
}
