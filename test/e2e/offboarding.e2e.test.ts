import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readDevSecret, signDevToken } from '@rsd/platform';
import { REPO_ROOT } from '../support/embedded-process';
import { embeddedSuite } from '../support/embedded-suite';
import { everySqliteRow } from '../support/leak-search';
import { offboardOneOfTwo } from '../support/offboarding-scenarios';

const runFile = promisify(execFile);

/**
 * Tables that keep the offboarding's own ids by design, apart from the stores searched: the event log
 * (the log keeps its records; decision 56's sealing makes what they hold unreadable) and the
 * offboardings' record (ids and instants, 30 days). The subject keys' tombstones are in a file of their own.
 */
const NOT_STORES = ['events', 'offboardings'];
const REBUILT = 'rebuilt_after_offboarding';

const suite = embeddedSuite('rsd-offboarding-');

test('when one of two organizations is offboarded, then no store, view or log line holds its names, scores or grants, a rebuild of the views makes none of it again, and the other still reads', async () => {
  const { product, dataDir } = suite;
  const secret = (await readDevSecret(dataDir))!;
  const { kept, traces } = await offboardOneOfTwo(
    {
      credentials: product.urls.credentials,
      scoreIngest: product.urls.scoreIngest,
      readApi: product.urls.readApi,
      tokenFor: (org, scope) => signDevToken(secret, { org, scope }),
      storedRows: () => everySqliteRow(dataDir, { except: NOT_STORES }),
      logLines: () => product.output(),
    },
    { offboarded: 'offboarded-e2e', kept: 'kept-e2e' },
  );

  // The views rebuilt from the whole log, into a namespace of their own beside the running product.
  await runFile(process.execPath, [join(REPO_ROOT, 'services/read-api/dist/rebuild-views/main.js'), '--into', REBUILT], {
    cwd: REPO_ROOT,
    env: { ...process.env, RUNTIME: 'embedded', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
  });
  const rebuilt = await everySqliteRow(dataDir, { namespace: REBUILT });
  expect(rebuilt.some((row) => row.includes(kept.clientId))).toBe(true);
  expect(rebuilt.filter((row) => traces.some((trace) => row.includes(trace)))).toEqual([]);
}, 180_000);
