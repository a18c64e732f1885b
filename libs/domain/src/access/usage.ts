import type { AuthorizationUsage } from '@rsd/contracts';

// Decision 20: an authorization's usage, counted in buckets so that no answer ever counts the
// access log's records (a credential may read 120 times a minute, 5 million times in 30 days).
// Stores keep, per Client ID, the successful reads of each minute and of each hour; a window is its
// whole hours plus the minutes at either end, at most 720 hour buckets and 120 minute buckets
// whatever the volume. A window starts at the minute `W` before now, so a read leaves it at most
// 60 s late: within the lag decision 20 allows.

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

export const USAGE_WINDOWS_MS = { last24h: DAY_MS, last30d: 30 * DAY_MS } as const satisfies Record<keyof AuthorizationUsage, number>;

/** How long stores keep buckets: the longest window, its first minute and a margin for clocks. */
export const USAGE_BUCKET_RETENTION_MS = USAGE_WINDOWS_MS.last30d + DAY_MS;

/** What an authorization response says of its use. */
export interface RecordUsage {
  lastUsedAt: string | null;
  usage: AuthorizationUsage;
}

export const NO_USAGE: RecordUsage = Object.freeze({ lastUsedAt: null, usage: Object.freeze({ last24h: 0, last30d: 0 }) });

/** A successful read: the representation (200), or a 304 confirming the one the recipient already holds. */
export function isSuccessfulRead(status: number): boolean {
  return status >= 200 && status < 400;
}

/** What decision 20 counts as use: a successful read. A claim of the key (decision 38) is listed in the access log, but is no read. */
export function countsAsUse(record: { resource: string; status: number }): boolean {
  return record.resource !== 'claim' && isSuccessfulRead(record.status);
}

export type UsageGrain = 'minute' | 'hour';

export interface UsageBucket {
  grain: UsageGrain;
  /** Epoch milliseconds at which the bucket's minute or hour starts. */
  start: number;
  reads: number;
}

/** Buckets of one grain starting at or after `from` and, when `to` is given, before it. */
export interface BucketRange {
  grain: UsageGrain;
  from: number;
  to?: number;
}

const SIZE: Record<UsageGrain, number> = { minute: MINUTE_MS, hour: HOUR_MS };

export function bucketStart(grain: UsageGrain, epochMs: number): number {
  return Math.floor(epochMs / SIZE[grain]) * SIZE[grain];
}

/** One window as ranges: the minutes up to its first whole hour, the whole hours, the minutes of the current hour. */
function windowRanges(now: Date, lengthMs: number): BucketRange[] {
  const from = bucketStart('minute', now.getTime() - lengthMs);
  const firstWholeHour = Math.ceil(from / HOUR_MS) * HOUR_MS;
  const currentHour = bucketStart('hour', now.getTime());
  const ranges: BucketRange[] = [];
  if (from < firstWholeHour) ranges.push({ grain: 'minute', from, to: firstWholeHour });
  if (firstWholeHour < currentHour) ranges.push({ grain: 'hour', from: firstWholeHour, to: currentHour });
  // No upper bound: a replica whose clock runs a little ahead still counts.
  ranges.push({ grain: 'minute', from: currentHour });
  return ranges;
}

const inRange = (bucket: UsageBucket, range: BucketRange) =>
  bucket.grain === range.grain && bucket.start >= range.from && (range.to === undefined || bucket.start < range.to);

/** The ranges a store must read to answer both windows: the 30 days' ranges cover the 24 hours' whole hours. */
export function usageBucketRanges(now: Date): BucketRange[] {
  const ranges = [...windowRanges(now, USAGE_WINDOWS_MS.last30d), ...windowRanges(now, USAGE_WINDOWS_MS.last24h)];
  return ranges.filter(
    (range, index) =>
      ranges.findIndex((other) => other.grain === range.grain && other.from === range.from && other.to === range.to) === index,
  );
}

/** Both windows from the buckets of one Client ID; buckets outside the ranges are ignored. */
export function usageFrom(buckets: readonly UsageBucket[], now: Date): AuthorizationUsage {
  const sum = (lengthMs: number) => {
    const ranges = windowRanges(now, lengthMs);
    let reads = 0;
    for (const bucket of buckets) if (ranges.some((range) => inRange(bucket, range))) reads += bucket.reads;
    return reads;
  };
  return { last24h: sum(USAGE_WINDOWS_MS.last24h), last30d: sum(USAGE_WINDOWS_MS.last30d) };
}

/** One UTC day of an authorization's reads (decision 38's chart): successful reads and refused ones apart; claims are neither. */
export interface DailyReads {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  reads: number;
  refusals: number;
}

/** A refused read: any 4xx or 5xx answer to a read; a claim of the key is not a read. */
export function countsAsRefusal(record: { resource: string; status: number }): boolean {
  return record.resource !== 'claim' && record.status >= 400;
}

/**
 * Hour buckets' reads and refusals summed by UTC day, oldest first, days with neither left out: how
 * the stores answer the chart from at most 24 buckets a day, whatever the volume.
 */
export function dailyFromHours(hours: Iterable<{ start: number; reads: number; refusals: number }>): DailyReads[] {
  const days = new Map<string, DailyReads>();
  for (const { start, reads, refusals } of hours) {
    if (reads + refusals === 0) continue;
    const day = new Date(start).toISOString().slice(0, 10);
    const counted = days.get(day);
    if (counted) {
      counted.reads += reads;
      counted.refusals += refusals;
    } else days.set(day, { day, reads, refusals });
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day));
}

/** The first instant of the `days` UTC days that end with today's. */
export function dailyWindowStart(now: Date, days: number): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (days - 1) * DAY_MS);
}

/** Every one of those days, oldest first, with what a store counted for it and zeros for the rest. */
export function everyDay(counted: readonly DailyReads[], now: Date, days: number): DailyReads[] {
  const byDay = new Map(counted.map((entry) => [entry.day, entry]));
  const start = dailyWindowStart(now, days).getTime();
  return Array.from({ length: days }, (_, index) => {
    const day = new Date(start + index * DAY_MS).toISOString().slice(0, 10);
    const found = byDay.get(day);
    return { day, reads: found?.reads ?? 0, refusals: found?.refusals ?? 0 };
  });
}
