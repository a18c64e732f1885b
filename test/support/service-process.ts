import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { resolve } from 'node:path';
import { REPO_ROOT, answersReady, eventually } from './embedded-process';

export interface ServiceProcess {
  url: string;
  output(): string;
  /** SIGTERM (graceful) or SIGKILL (a crash); resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * One response signing key for every read-API replica a test process starts (decision 24: replicas
 * sign with the same published keys), unless the test passes its own RESPONSE_SIGNING_KEYS.
 */
export const TEST_RESPONSE_SIGNING_KEYS = (() => {
  const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x, d, kid: 'test-signing-key' }]);
})();

/**
 * The master key of the subjects' keys (decision 56) for every service the suites start on the
 * distributed runtime, where it is required: each opens what the others sealed. One fixed value (a
 * test's, no secret) for every run, since suites that share a MongoDB-wire server may share its key
 * store too: a key wrapped by one run must open in the next.
 */
export const TEST_SUBJECT_KEYS_MASTER_KEY = Buffer.from('rsd-test-subject-keys-master-key', 'utf8').toString('base64');

/** The services that sign with the response-signing keys: the read API's responses and certificates, the credentials service's review reports. */
const SIGNS = new Set(['read-api', 'credentials']);

/** One built service (`services/<name>/dist/main.js`) started, its output (stdout and stderr) gathered. */
function spawnService(
  name: string,
  env: Record<string, string>,
): { child: ChildProcess; output(): string; exited: Promise<number | null> } {
  const child: ChildProcess = spawn(process.execPath, [resolve(REPO_ROOT, `services/${name}/dist/main.js`)], {
    cwd: REPO_ROOT,
    env: {
      ...(SIGNS.has(name) ? { RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS } : {}),
      ...(name === 'console' ? {} : { SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY }),
      ...process.env,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, output: () => output, exited };
}

/**
 * Starts one built service that is expected to refuse to start, and waits for it to exit by itself:
 * its exit code and output. One still running after `timeoutMs` is killed and the wait fails.
 */
export async function serviceRefusal(
  name: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const { child, output, exited } = spawnService(name, env);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_done, fail) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${name} was still running after ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
  });
  try {
    const code = await Promise.race([exited, timedOut]);
    return { code, output: output() };
  } finally {
    clearTimeout(timer);
  }
}

/** Starts one built service (`services/<name>/dist/main.js`) and waits until its /readyz answers 200. */
export async function startService(name: string, port: number, env: Record<string, string>): Promise<ServiceProcess> {
  const { child, output, exited } = spawnService(name, env);
  const url = `http://127.0.0.1:${port}`;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output()}`);
        return (await answersReady(url)) ? true : undefined;
      },
      60_000,
      200,
    );
  } catch (error) {
    await stop('SIGKILL');
    throw error;
  }
  return { url, output, stop };
}
