import { closeServer, createLogger, listen, loadConfigs, portOf } from '@rsd/platform';
import { systemClock } from '@rsd/ports';
import { createReadApiModule, readApiConfigSchema, type ResponseSigner } from '@rsd/read-api';
import { openRuntime, runtimeConfigSchema } from '@rsd/runtime';

/**
 * `npm run bench` only, never shipped: the read API alone on the embedded runtime of DATA_DIR (made
 * by the product beforehand), composed as `npm start` composes it. With `--unsigned` its responses
 * are not signed: the baseline that prices decision 24's signing in the same run, against the same
 * process without the flag. Prints `{"msg":"read api ready","port":…}`.
 */
const UNSIGNED: ResponseSigner = { sign: () => ({ 'content-digest': '', 'signature-input': '', signature: '' }) };

async function main(): Promise<void> {
  const [config, runtimeConfig] = loadConfigs(
    [readApiConfigSchema, runtimeConfigSchema({ defaultRuntime: 'embedded', needs: [] })],
    process.env,
  );
  const log = createLogger('read-api', 'warn');
  const runtime = await openRuntime(runtimeConfig, 'read-api', log);
  const module = await createReadApiModule({
    config: { ...config, READ_VIEWS_DB: runtimeConfig.READ_VIEWS_DB },
    runtime,
    clock: systemClock,
    log,
    ...(process.argv.includes('--unsigned') ? { responseSigner: UNSIGNED } : {}),
  });
  await module.viewsCaughtUp;
  const server = await listen(module.app, 0, '127.0.0.1');
  process.stdout.write(`${JSON.stringify({ msg: 'read api ready', port: portOf(server) })}\n`);
  process.once('SIGTERM', () => {
    void closeServer(server)
      .then(() => module.stop())
      .then(() => runtime.close())
      .then(() => process.exit(0));
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
