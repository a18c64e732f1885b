import { parseArgs } from 'node:util';
import { runMain } from '@rsd/platform';
import { createReadApiModule, readApiService, type ResponseSigner } from '@rsd/read-api';
import { runServices } from '@rsd/runtime';

// `npm run bench` only, never shipped: the read API alone on the embedded runtime of DATA_DIR (made
// by the product beforehand), run by the same runner as `npm start`. With `--unsigned` its responses
// are not signed: the baseline that prices decision 24's signing in the same run, against the same
// process without the flag. Prints `{"msg":"read api ready","port":…}`.

const UNSIGNED: ResponseSigner = { sign: () => ({ 'content-digest': '', 'signature-input': '', signature: '' }) };

runMain(async () => {
  const { unsigned } = parseArgs({ options: { unsigned: { type: 'boolean', default: false } } }).values;
  const readApi: typeof readApiService = unsigned
    ? { ...readApiService, start: (context) => createReadApiModule({ ...context, responseSigner: UNSIGNED }) }
    : readApiService;
  const running = await runServices([readApi], {
    name: 'read-api',
    defaultRuntime: 'embedded',
    env: { ...process.env, READ_API_PORT: '0', READ_API_HOST: '127.0.0.1' },
  });
  const port = new URL(running.urlOf(readApi)).port;
  process.stdout.write(`${JSON.stringify({ msg: 'read api ready', port: Number(port) })}\n`);
});
