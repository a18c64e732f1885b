import { join } from 'node:path';
import { TOPICS } from '@rsd/contracts';
import { authorizationFactory, createRequestOf } from './authorization-factory';
import { ChunkedFile } from './chunked-file';
import { organizationId, organizationIndexOf, readerIndexes, type DataSetShape } from './data-set-shape';
import { scoreRecordOf } from './score-factory';
import {
  AUTHORIZATION_STORE_FILE,
  EVENT_LOG_FILE,
  STORE_DOCUMENT_END,
  STORE_DOCUMENT_START,
  eventLogLine,
  storeEntry,
} from './today-layout';

/** A credential the bench reads with: its raw key was kept when the data set was made. */
export interface Reader {
  clientId: string;
  apiKey: string;
  organizationId: string;
}

export interface BuiltDataSet {
  buildMs: number;
  eventLogBytes: number;
  storeBytes: number;
  readers: Reader[];
}

const DAY_MS = 86_400_000;
/** Authorizations were created over the last two years. */
const CREATION_WINDOW_MS = 730 * DAY_MS;

/**
 * Writes a data directory in today's layout: every authorization's record in authorizations.json and
 * its Created event in events.ndjson, in creation order, then the scores day by day as a scoring
 * engine posts them, oldest first, yesterday last. Both files are streamed.
 */
export async function buildDataSet(dir: string, shape: DataSetShape, now: Date): Promise<BuiltDataSet> {
  const started = performance.now();
  const make = authorizationFactory();
  const readerSet = new Set(readerIndexes(shape));
  const readers: Reader[] = [];
  const events = await ChunkedFile.create(join(dir, EVENT_LOG_FILE));
  const store = await ChunkedFile.create(join(dir, AUTHORIZATION_STORE_FILE));

  const firstCreation = now.getTime() - CREATION_WINDOW_MS;
  const step = (CREATION_WINDOW_MS - DAY_MS) / shape.authorizations;
  await store.write(STORE_DOCUMENT_START);
  for (let i = 0; i < shape.authorizations; i += 1) {
    const organization = organizationId(organizationIndexOf(shape, i));
    const reader = readerSet.has(i);
    const made = await make(organization, createRequestOf(i, reader, now), new Date(firstCreation + Math.floor(i * step)));
    await store.write(storeEntry(made.record, i === 0));
    await events.write(eventLogLine(made.created.topic, made.created));
    if (reader) readers.push({ clientId: made.record.clientId, apiKey: made.apiKey, organizationId: organization });
  }
  await store.write(STORE_DOCUMENT_END);
  await store.close();

  // When the count is not a whole number of days, the oldest day is the partial one: every
  // organization has yesterday's score, the latest the read API serves.
  const today = Date.parse(now.toISOString().slice(0, 10));
  let skip = shape.days * shape.organizations - shape.scoreEvents;
  for (let day = 0; day < shape.days; day += 1) {
    const scoreDate = new Date(today - (shape.days - day) * DAY_MS).toISOString().slice(0, 10);
    for (let o = 0; o < shape.organizations; o += 1) {
      if (skip > 0) {
        skip -= 1;
        continue;
      }
      await events.write(eventLogLine(TOPICS.scores, scoreRecordOf(organizationId(o), o, day, scoreDate)));
    }
  }
  await events.close();
  return { buildMs: performance.now() - started, eventLogBytes: events.bytes, storeBytes: store.bytes, readers };
}
