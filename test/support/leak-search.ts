import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { kafkaSecurityFromEnvironment } from './clustered-engines';

/*
 * Where the suites look for what must never be stored: every record of every product topic, every
 * document of the given databases, and (embedded runtime) every row of every SQLite database.
 */

/** Every record (key and value) of every `rsd.` topic, one string each, and the topics read. */
export async function everyTopicRecord(brokers: string, clientId: string): Promise<{ topics: string[]; values: string[] }> {
  const { topics, messages } = await topicMessages(brokers, clientId, (topic) => topic.startsWith('rsd.'));
  return { topics, values: messages.map(({ key, value }) => `${key} ${value}`) };
}

/** Every record of the topics `chosen` picks, from their start to their end when asked, and the topics read. */
export async function topicMessages(
  brokers: string,
  clientId: string,
  chosen: (topic: string) => boolean,
): Promise<{ topics: string[]; messages: { key: string; value: string }[] }> {
  const kafka = new Kafka({ brokers: brokers.split(','), clientId, logLevel: logLevel.NOTHING, ...kafkaSecurityFromEnvironment() });
  const admin = kafka.admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter(chosen);
  const ends = await Promise.all(topics.map(async (topic) => ({ topic, offsets: await admin.fetchTopicOffsets(topic) })));
  await admin.disconnect();
  const expected = ends.reduce((sum, { offsets }) => sum + offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0), 0);
  const consumer = kafka.consumer({ groupId: clientId });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  const messages: { key: string; value: string }[] = [];
  await new Promise<void>((done) => {
    if (expected === 0) done();
    void consumer.run({
      eachMessage: ({ message }) => {
        messages.push({ key: message.key?.toString() ?? '', value: message.value?.toString() ?? '' });
        if (messages.length >= expected) done();
        return Promise.resolve();
      },
    });
  });
  await consumer.disconnect();
  return { topics, messages };
}

/** Every collection of each database, as one JSON string per collection, and the collections' names. */
export async function everyCollection(mongoUrl: string, databases: string[]): Promise<{ collections: string[]; documents: string[] }> {
  const client = await MongoClient.connect(mongoUrl);
  const collections: string[] = [];
  const documents: string[] = [];
  try {
    for (const name of databases) {
      const db = client.db(name);
      for (const { name: collection } of await db.listCollections().toArray()) {
        collections.push(collection);
        documents.push(JSON.stringify(await db.collection(collection).find().toArray()));
      }
    }
  } finally {
    await client.close();
  }
  return { collections, documents };
}

/**
 * Decision 56: which of `needles` (a test organization's recipient names, addresses, score members) any
 * of `haystacks` (a log's raw records, a store's documents) still holds readable; empty when none does.
 */
export function readableIn(haystacks: readonly string[], needles: readonly string[]): string[] {
  return needles.filter((needle) => haystacks.some((haystack) => haystack.includes(needle)));
}

/**
 * Every row of every table of every `*.sqlite` database in the data directory, one string each
 * (`<file> <table> <row as JSON>`): what any SQLite client reads. Tables named in `except` are left
 * out; with `namespace`, only the views of that namespace (`view:<namespace>:…`) are read.
 */
export async function everySqliteRow(dataDir: string, options: { except?: readonly string[]; namespace?: string } = {}): Promise<string[]> {
  const except = new Set(options.except ?? []);
  const rows: string[] = [];
  for (const file of (await readdir(dataDir)).filter((name) => name.endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(dataDir, file), { readOnly: true });
    try {
      for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()) {
        const table = String(name);
        if (except.has(table) || (options.namespace !== undefined && !table.startsWith(`view:${options.namespace}:`))) continue;
        for (const row of db.prepare(`SELECT * FROM "${table.replaceAll('"', '""')}"`).all())
          rows.push(`${file} ${table} ${JSON.stringify(row)}`);
      }
    } finally {
      db.close();
    }
  }
  return rows;
}
