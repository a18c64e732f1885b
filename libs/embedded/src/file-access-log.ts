import { createReadStream } from 'node:fs';
import { appendFile, mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AccessRecord } from '@rsd/contracts';
import {
  bucketStart,
  isBeyond,
  isSuccessfulRead,
  newestFirst,
  NO_USAGE,
  USAGE_BUCKET_RETENTION_MS,
  usageBucketRanges,
  usageFrom,
  HOUR_MS,
  MINUTE_MS,
  type AccessLogPosition,
  type RecordUsage,
  type UsageBucket,
} from '@rsd/domain';
import type { AccessLog, AccessLogStore } from '@rsd/ports';
import { silentLogger, type EmbeddedLogger } from './embedded-logger';

export interface FileAccessLogOptions {
  /** DATA_DIR/access-log */
  dir: string;
  log?: EmbeddedLogger;
  now?: () => Date;
}

/**
 * The embedded runtime's access log (decision 21): files, apart from the event log, appended once
 * per batch and never fsynced (an access record is not worth a disk flush per read, and a crash loses
 * at most what the OS had not written yet). No file is ever rewritten.
 *
 * - `entries/<day>/<clientId>.ndjson`: one line per request, in the order of `at` (one process
 *   appends them as its requests finish). A page reads one Client ID's files from the end,
 *   newest day first, and stops as soon as nothing older can enter it: its cost is the page, not
 *   the log. A day's directory is deleted once the whole day is past retention.
 * - `usage/<day>.ndjson`: the successful reads of each (Client ID, minute), appended once the minute
 *   is over. At start the last 31 days of them are summed into per-minute and per-hour counters in
 *   memory (at most 44,640 + 744 numbers per Client ID, whatever the volume); nothing else is loaded.
 *   A crash loses at most the current minute's counts, never an entry.
 *
 * Publishing writes the store directly: the read API and the credentials service share the process.
 */
export async function openFileAccessLog(options: FileAccessLogOptions): Promise<AccessLog> {
  const store = await openFileAccessLogStore(options);
  return {
    publish: (records) => store.add(records),
    openStore: () => Promise.resolve(store),
    close: () => store.close(),
  };
}

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** Last uses older than the usage files kept: one line per Client ID that fell silent for that long. */
const LAST_USED_FILE = 'last-used.ndjson';

/** A stored line: the record without its Client ID, which the file's name holds. */
type EntryLine = Omit<AccessRecord, 'clientId'>;

/** More than this many files open for appending, and the least recently written is closed. */
const MAX_OPEN_FILES = 64;

const quoted = (text: string | null) => (text === null ? 'null' : JSON.stringify(text));

/** The line of one record, built field by field: a whole object's JSON.stringify, minus the Client ID, costs more than the read it records. */
function entryLine(record: AccessRecord): string {
  return (
    `{"id":${quoted(record.id)},"at":${quoted(record.at)},"resource":${quoted(record.resource)},"status":${record.status},` +
    `"code":${quoted(record.code)},"clientAddress":${quoted(record.clientAddress)},"requestId":${quoted(record.requestId)}}\n`
  );
}

interface UsageLine {
  clientId: string;
  minute: string;
  reads: number;
  lastUsedAt: string;
}

export async function openFileAccessLogStore(options: FileAccessLogOptions): Promise<AccessLogStore> {
  const log = options.log ?? silentLogger;
  const now = options.now ?? (() => new Date());
  const entriesDir = join(options.dir, 'entries');
  const usageDir = join(options.dir, 'usage');
  await mkdir(entriesDir, { recursive: true, mode: 0o700 });
  await mkdir(usageDir, { recursive: true, mode: 0o700 });

  const counters = new UsageCounters();
  await loadUsage(usageDir, now(), counters, log);
  /** Successful reads of minutes not yet over, or whose line could not be written yet. */
  const pendingUsage = new Map<string, UsageLine>();
  const madeDays = new Set<string>();
  /** Files kept open for appending, least recently used first: one write per batch instead of an open, a write and a close. */
  const handles = new Map<string, FileHandle>();
  /** Records of a batch that failed part-way: the recorder sends the batch again, and these must not be written twice. */
  const writtenOfFailedBatch = new Set<string>();
  let prunedBefore = '';
  let writes: Promise<unknown> = Promise.resolve();
  let closed = false;

  async function appendHandle(day: string, clientId: string): Promise<FileHandle> {
    const file = join(entriesDir, day, `${clientId}.ndjson`);
    const kept = handles.get(file);
    if (kept) {
      handles.delete(file);
      handles.set(file, kept);
      return kept;
    }
    if (!madeDays.has(day)) {
      await mkdir(join(entriesDir, day), { recursive: true, mode: 0o700 });
      madeDays.add(day);
    }
    const torn = await endsInTornLine(file);
    const handle = await open(file, 'a', 0o600);
    // A file this process had not opened may end in a line torn by a crash: the next line starts on its own.
    if (torn) await handle.write('\n');
    handles.set(file, handle);
    if (handles.size > MAX_OPEN_FILES) {
      const [oldestFile, oldest] = handles.entries().next().value as [string, FileHandle];
      handles.delete(oldestFile);
      await oldest.close();
    }
    return handle;
  }

  async function closeHandles(day?: string): Promise<void> {
    for (const [file, handle] of handles) {
      if (day !== undefined && !file.startsWith(join(entriesDir, day))) continue;
      handles.delete(file);
      await handle.close();
    }
  }

  async function add(records: readonly AccessRecord[]): Promise<void> {
    const fresh = records.filter((record) => !writtenOfFailedBatch.has(record.id));
    const groups = new Map<string, AccessRecord[]>();
    for (const record of fresh) {
      const key = `${dayOf(record.at)}/${record.clientId}`;
      const group = groups.get(key);
      if (group) group.push(record);
      else groups.set(key, [record]);
    }
    // One file after another: a handle is never closed to make room while another group writes to it.
    const outcomes: PromiseSettledResult<AccessRecord[]>[] = [];
    for (const group of groups.values()) {
      const [first] = group as [AccessRecord];
      try {
        const handle = await appendHandle(dayOf(first.at), first.clientId);
        await handle.write(group.map(entryLine).join(''));
        outcomes.push({ status: 'fulfilled', value: group });
      } catch (error) {
        outcomes.push({ status: 'rejected', reason: error });
      }
    }
    // Successful reads per Client ID and minute first (`at` is one fixed ISO form), then one count per pair.
    const perMinute = new Map<string, UsageLine>();
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') continue;
      for (const { clientId, at, status } of outcome.value) {
        if (!isSuccessfulRead(status)) continue;
        const key = `${clientId} ${at.slice(0, 16)}`;
        const counted = perMinute.get(key);
        if (!counted) perMinute.set(key, { clientId, minute: `${at.slice(0, 16)}:00.000Z`, reads: 1, lastUsedAt: at });
        else {
          counted.reads += 1;
          if (at > counted.lastUsedAt) counted.lastUsedAt = at;
        }
      }
    }
    for (const counted of perMinute.values()) {
      counters.count(counted.clientId, counted.minute, counted.reads, counted.lastUsedAt);
      notePending(counted);
    }
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) {
      for (const outcome of outcomes)
        if (outcome.status === 'fulfilled') for (const record of outcome.value) writtenOfFailedBatch.add(record.id);
      throw new Error('appending to the access log failed', { cause: failed.reason });
    }
    writtenOfFailedBatch.clear();
    await writeFinishedMinutes();
  }

  function notePending(counted: UsageLine): void {
    const key = `${counted.clientId} ${counted.minute}`;
    const pending = pendingUsage.get(key);
    if (!pending) pendingUsage.set(key, { ...counted });
    else {
      pending.reads += counted.reads;
      if (counted.lastUsedAt > pending.lastUsedAt) pending.lastUsedAt = counted.lastUsedAt;
    }
  }

  /** The counts of minutes that are over (all of them when closing) go to the usage file of their day. */
  async function writeFinishedMinutes(all = false): Promise<void> {
    const currentMinute = new Date(bucketStart('minute', now().getTime())).toISOString();
    const byDay = new Map<string, UsageLine[]>();
    for (const [key, line] of pendingUsage) {
      if (!all && line.minute >= currentMinute) continue;
      pendingUsage.delete(key);
      const day = dayOf(line.minute);
      byDay.set(day, [...(byDay.get(day) ?? []), line]);
    }
    for (const [day, lines] of byDay) {
      try {
        await appendFile(join(usageDir, `${day}.ndjson`), lines.map((line) => JSON.stringify(line)).join('\n') + '\n', { mode: 0o600 });
      } catch (error) {
        // The counters in memory are right; only their copy on disk waits for the next batch.
        for (const line of lines) pendingUsage.set(`${line.clientId} ${line.minute}`, line);
        log.warn({ err: error }, 'could not write access-log usage counts; keeping them for the next batch');
      }
    }
  }

  /** Writes one at a time, so the files keep the order the records came in. */
  function serially<T>(task: () => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new Error('the access log is closed'));
    const run = writes.then(task);
    writes = run.catch(() => undefined);
    return run;
  }

  async function page(clientId: string, limit: number, after: AccessLogPosition | undefined): Promise<AccessRecord[]> {
    const days = (await daysIn(entriesDir)).filter((day) => after === undefined || day <= dayOf(after.at)).reverse();
    const found: AccessRecord[] = [];
    const seen = new Set<string>();
    for (const day of days) {
      const file = join(entriesDir, day, `${clientId}.ndjson`);
      // Lines come newest first; once `limit` are found, only lines as new as the last of them can still enter.
      let threshold: string | undefined;
      for await (const line of linesBackward(file)) {
        const entry = parseEntry(line);
        if (!entry || entry.at < prunedBefore) continue;
        if (threshold !== undefined && entry.at < threshold) break;
        const record: AccessRecord = { ...entry, clientId };
        if ((after && !isBeyond(record, after)) || seen.has(record.id)) continue;
        seen.add(record.id);
        found.push(record);
        if (threshold === undefined && found.length >= limit) threshold = record.at;
      }
      if (found.length >= limit) break;
    }
    return found.sort(newestFirst).slice(0, limit);
  }

  return {
    add: (records) => serially(() => add(records)),

    page: (clientId, { limit, after }) => page(clientId, limit, after),

    usage(clientIds, at) {
      return Promise.resolve(new Map(clientIds.map((clientId) => [clientId, counters.usage(clientId, at)])));
    },

    prune: (before, at) =>
      serially(async () => {
        prunedBefore = before.toISOString();
        const lastWholeDayGone = dayOf(new Date(before.getTime() - 86_400_000).toISOString());
        for (const day of await daysIn(entriesDir)) {
          if (day > lastWholeDayGone) break;
          await closeHandles(day);
          await rm(join(entriesDir, day), { recursive: true, force: true });
          madeDays.delete(day);
        }
        const usageBefore = at.getTime() - USAGE_BUCKET_RETENTION_MS;
        const lastUsageDayGone = dayOf(new Date(usageBefore - 86_400_000).toISOString());
        for (const name of (await readdir(usageDir)).sort()) {
          const day = name.replace(/\.ndjson$/, '');
          if (!DAY_PATTERN.test(day) || day > lastUsageDayGone) continue;
          await keepLastUses(join(usageDir, name), join(usageDir, LAST_USED_FILE), counters);
          await rm(join(usageDir, name), { force: true });
        }
        counters.forgetBefore(usageBefore);
      }),

    async close() {
      if (closed) return;
      await serially(async () => {
        await writeFinishedMinutes(true);
        await closeHandles();
      });
      closed = true;
      await writes;
    },
  };
}

function dayOf(instant: string): string {
  return instant.slice(0, 10);
}

async function daysIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => DAY_PATTERN.test(name)).sort();
}

function parseEntry(line: string): EntryLine | undefined {
  try {
    const value = JSON.parse(line) as EntryLine;
    return typeof value.at === 'string' && typeof value.id === 'string' && typeof value.requestId === 'string' ? value : undefined;
  } catch {
    // A line torn by a crash: what is left of it is skipped.
    return undefined;
  }
}

async function endsInTornLine(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return false;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    await handle.close();
  }
}

const CHUNK_BYTES = 64 * 1024;

/** The file's lines from the last to the first, reading it backwards a chunk at a time; none when it does not exist. */
export async function* linesBackward(file: string): AsyncGenerator<string> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    let position = (await handle.stat()).size;
    let rest = Buffer.alloc(0);
    while (position > 0) {
      const size = Math.min(CHUNK_BYTES, position);
      position -= size;
      const chunk = Buffer.alloc(size);
      await handle.read(chunk, 0, size, position);
      const buffer = rest.length > 0 ? Buffer.concat([chunk, rest]) : chunk;
      let end = buffer.length;
      // A newline byte never occurs inside a multi-byte UTF-8 character.
      for (let at = buffer.length - 1; at >= 0; at -= 1) {
        if (buffer[at] !== 0x0a) continue;
        if (end > at + 1) yield buffer.toString('utf8', at + 1, end);
        end = at;
      }
      rest = buffer.subarray(0, end);
    }
    if (rest.length > 0) yield rest.toString('utf8');
  } finally {
    await handle.close();
  }
}

async function* usageLines(file: string, log: EmbeddedLogger): AsyncGenerator<UsageLine> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const text of lines) {
    try {
      yield JSON.parse(text) as UsageLine;
    } catch {
      if (text !== '') log.warn({ file }, 'skipped an unreadable line of the access-log usage counts');
    }
  }
}

/** Reads the usage files of the last 31 days and the older last uses, a line at a time, into the counters. */
async function loadUsage(usageDir: string, now: Date, counters: UsageCounters, log: EmbeddedLogger): Promise<void> {
  const firstDay = dayOf(new Date(now.getTime() - USAGE_BUCKET_RETENTION_MS - 86_400_000).toISOString());
  const names = await readdir(usageDir);
  if (names.includes(LAST_USED_FILE)) {
    for await (const line of usageLines(join(usageDir, LAST_USED_FILE), log)) counters.noteLastUse(line.clientId, line.lastUsedAt);
  }
  for (const name of names.sort()) {
    const day = name.replace(/\.ndjson$/, '');
    if (!DAY_PATTERN.test(day) || day < firstDay) continue;
    for await (const line of usageLines(join(usageDir, name), log)) counters.count(line.clientId, line.minute, line.reads, line.lastUsedAt);
  }
}

/** Before a usage file goes, the last uses it holds that nothing later replaced are kept, one line per Client ID. */
async function keepLastUses(file: string, lastUsedFile: string, counters: UsageCounters): Promise<void> {
  const lastUses = new Map<string, string>();
  for await (const line of usageLines(file, silentLogger)) {
    if (line.lastUsedAt > (lastUses.get(line.clientId) ?? '')) lastUses.set(line.clientId, line.lastUsedAt);
  }
  const still = [...lastUses].filter(([clientId, lastUsedAt]) => counters.lastUsedAt(clientId) === lastUsedAt);
  if (still.length === 0) return;
  const text = still.map(([clientId, lastUsedAt]) => JSON.stringify({ clientId, lastUsedAt })).join('\n') + '\n';
  await appendFile(lastUsedFile, text, { mode: 0o600 });
}

/** Successful reads per Client ID per minute and per hour, and the last one's instant. */
class UsageCounters {
  private readonly byClient = new Map<string, { minutes: Map<number, number>; hours: Map<number, number>; lastUsedAt: string }>();

  count(clientId: string, at: string, reads: number, lastUsedAt = at): void {
    const epochMs = Date.parse(at);
    let counts = this.byClient.get(clientId);
    if (!counts) {
      counts = { minutes: new Map(), hours: new Map(), lastUsedAt };
      this.byClient.set(clientId, counts);
    }
    const minute = bucketStart('minute', epochMs);
    const hour = bucketStart('hour', epochMs);
    counts.minutes.set(minute, (counts.minutes.get(minute) ?? 0) + reads);
    counts.hours.set(hour, (counts.hours.get(hour) ?? 0) + reads);
    if (lastUsedAt > counts.lastUsedAt) counts.lastUsedAt = lastUsedAt;
  }

  noteLastUse(clientId: string, lastUsedAt: string): void {
    const counts = this.byClient.get(clientId);
    if (!counts) this.byClient.set(clientId, { minutes: new Map(), hours: new Map(), lastUsedAt });
    else if (lastUsedAt > counts.lastUsedAt) counts.lastUsedAt = lastUsedAt;
  }

  lastUsedAt(clientId: string): string | undefined {
    return this.byClient.get(clientId)?.lastUsedAt;
  }

  usage(clientId: string, now: Date): RecordUsage {
    const counts = this.byClient.get(clientId);
    if (!counts) return NO_USAGE;
    // The windows' ranges overlap (the 30 days hold the 24 hours): each bucket is taken once.
    const buckets = new Map<string, UsageBucket>();
    for (const range of usageBucketRanges(now)) {
      const map = range.grain === 'minute' ? counts.minutes : counts.hours;
      const step = range.grain === 'minute' ? MINUTE_MS : HOUR_MS;
      // An open range reaches a little into the future: a clock ahead by that much would be a fault of its own.
      const to = range.to ?? range.from + 2 * HOUR_MS;
      for (let start = range.from; start < to; start += step) {
        const reads = map.get(start);
        if (reads !== undefined) buckets.set(`${range.grain} ${start}`, { grain: range.grain, start, reads });
      }
    }
    return { lastUsedAt: counts.lastUsedAt, usage: usageFrom([...buckets.values()], now) };
  }

  forgetBefore(epochMs: number): void {
    for (const counts of this.byClient.values()) {
      for (const start of counts.minutes.keys()) if (start < epochMs) counts.minutes.delete(start);
      for (const start of counts.hours.keys()) if (start < epochMs) counts.hours.delete(start);
    }
  }
}
