import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from './processes';
import { trackChild } from './scale/cleanup';

/**
 * A new Ed25519 key set as RESPONSE_SIGNING_KEYS takes it (decision 24): every process of a distributed
 * product gets the same one, as a shared secret would give them (the read APIs sign responses and
 * certificates, credentials the access reviews' reports, and a distributed process refuses to start without it).
 */
export function responseSigningKeys(kid?: string): string {
  const { x, d } = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x, d, ...(kid === undefined ? {} : { kid }) }]);
}

/**
 * The secrets every process of one distributed product shares: a response signing key set, and the master key of
 * the subjects' keys (decision 56: every replica opens what the others sealed; a distributed process refuses to
 * start without it).
 */
export function distributedSecrets(kid?: string): { RESPONSE_SIGNING_KEYS: string; SUBJECT_KEYS_MASTER_KEY: string } {
  return { RESPONSE_SIGNING_KEYS: responseSigningKeys(kid), SUBJECT_KEYS_MASTER_KEY: randomBytes(32).toString('base64') };
}

/** One process of the distributed runtime: which script, on which port, with which environment. */
export interface ServiceSpec {
  name: string;
  script: string;
  port: number;
  env: Record<string, string>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

export interface ServiceProcess {
  name: string;
  url: string;
  pid: number;
  logFile: string;
  spawnedAt: number;
  /** Set when the process ended before it was asked to stop. */
  unexpectedExit: Exit | undefined;
  /** SIGTERM, SIGKILL after the grace; resolves with how it ended. */
  stop(): Promise<Exit>;
}

/**
 * Starts a service as its own process with its output in a log file (nothing to drain, evidence
 * kept after the run), without waiting for anything. `stop` gives it `stopGraceMs` after SIGTERM.
 */
export function spawnService(spec: ServiceSpec, logDir: string, stopGraceMs: number): ServiceProcess {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${spec.name}.log`);
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, [resolve(ROOT, spec.script)], {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  // Killed with the run on Ctrl-C or a failure (cleanUpOnExit), never left behind.
  trackChild(child);
  let stopping = false;
  const exited = new Promise<Exit>((done) => child.once('exit', (code, signal) => done({ code, signal, at: Date.now() })));
  const service: ServiceProcess = {
    name: spec.name,
    url: `http://127.0.0.1:${spec.port}`,
    pid: child.pid ?? -1,
    logFile,
    spawnedAt: Date.now(),
    unexpectedExit: undefined,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
  void exited.then((exit) => {
    if (!stopping) service.unexpectedExit = exit;
  });
  return service;
}

export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export interface DistributedPorts {
  readApis: number[];
  credentials: number;
  scoreIngest: number;
}

/**
 * The distributed runtime's processes on loopback: credentials, score ingest and a read-API replica
 * per port of `ports.readApis` (read-api-a, read-api-b, …), each with `common` in its environment
 * and each replica also with what `replicaEnv` gives for its letter.
 */
export function distributedServiceSpecs(
  ports: DistributedPorts,
  common: Record<string, string>,
  replicaEnv: (letter: string) => Record<string, string>,
): ServiceSpec[] {
  return [
    {
      name: 'credentials',
      script: 'services/credentials/dist/main.js',
      port: ports.credentials,
      env: { ...common, CREDENTIALS_PORT: String(ports.credentials), CREDENTIALS_HOST: '127.0.0.1' },
    },
    {
      name: 'score-ingest',
      script: 'services/score-ingest/dist/main.js',
      port: ports.scoreIngest,
      env: { ...common, SCORE_INGEST_PORT: String(ports.scoreIngest), SCORE_INGEST_HOST: '127.0.0.1' },
    },
    ...ports.readApis.map((port, i) => {
      const letter = String.fromCharCode(97 + i);
      return {
        name: `read-api-${letter}`,
        script: 'services/read-api/dist/main.js',
        port,
        env: { ...common, READ_API_PORT: String(port), READ_API_HOST: '127.0.0.1', ...replicaEnv(letter) },
      };
    }),
  ];
}
