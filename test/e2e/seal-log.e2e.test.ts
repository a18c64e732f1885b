import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { request } from '@rsd/testkit';
import { aDataDirectoryWrittenInClear, clearEventsOf } from '../../libs/embedded/src/testing/clear-data-directory';
import { startEmbedded, type EmbeddedProcess } from '../support/embedded-process';
import { npxRsd } from '../support/rsd-cli';

// Decision 56's rewrite of a log written before sealing, as an operator runs it: the product (of this version) served
// the clear log, is stopped, `npx rsd seal-log` rewrites the log, and the product started again, its read views
// rebuilt from the sealed log into a new namespace, serves the same reads; the log's rows hold nothing readable.

let root: string;
let product: EmbeddedProcess | undefined;
afterAll(async () => {
  await product?.stop();
  await rm(root, { recursive: true, force: true });
});

// Reads come from loopback: the grant's allow list lets them in.
const acme = clearEventsOf('acme', 'Clearwater Recipient Ltd', '127.0.0.0/8', '203.0.113.77');

async function readsOf(dataDir: string, READ_VIEWS_DB: string) {
  product = await startEmbedded({ DATA_DIR: dataDir, READ_VIEWS_DB, LOG_LEVEL: 'info' });
  const headers = { 'x-api-key': acme.apiKey };
  const base = `${product.urls.readApi}/v1/customers/${acme.grant.data.clientId}`;
  const reads = { score: await request(`${base}/score`, { headers }), pillars: await request(`${base}/pillars`, { headers }) };
  await product.stop();
  product = undefined;
  return Object.fromEntries(Object.entries(reads).map(([name, { status, body }]) => [name, { status, body }]));
}

it('when the stopped product’s log is sealed, then the product serves the same reads from it, and the log holds nothing readable', async () => {
  root = await mkdtemp(join(tmpdir(), 'rsd-seal-log-e2e-'));
  const dataDir = join(root, 'data');
  await aDataDirectoryWrittenInClear(dataDir, [acme]);
  const before = await readsOf(dataDir, 'rsd_read_views');
  expect(before.score).toMatchObject({ status: 200, body: expect.objectContaining({ score: 83 }) as unknown });

  const sealed = await npxRsd(['seal-log', '--data-dir', dataDir]);

  expect(sealed.code).toBe(0);
  expect(JSON.parse(sealed.stdout)).toMatchObject({ topics: { 'rsd.authorizations.v1': { sealed: 2 }, 'rsd.scores.v1': { sealed: 1 } } });
  expect(await readsOf(dataDir, 'rsd_read_views_sealed')).toEqual(before);
  const again = await npxRsd(['seal-log', '--data-dir', dataDir]);
  expect(JSON.parse(again.stdout)).toMatchObject({ topics: { 'rsd.scores.v1': { sealed: 0, 'already-sealed': 1 } } });
  // The views keep what they serve in clear (decision 56); the log's rows do not.
  const db = new DatabaseSync(join(dataDir, 'rsd.sqlite'), { readOnly: true });
  const values = (db.prepare('SELECT value FROM events').all() as { value: string }[]).map((row) => row.value);
  db.close();
  expect(acme.readable.filter((needle) => values.some((value) => value.includes(needle)))).toEqual([]);
}, 180_000);
