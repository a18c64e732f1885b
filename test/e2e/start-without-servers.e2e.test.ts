import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually, REPO_ROOT } from '../support/embedded-process';
import { TEST_RESPONSE_SIGNING_KEYS, TEST_SUBJECT_KEYS_MASTER_KEY } from '../support/service-process';

/** Nothing listens on these (below the ephemeral range, away from every other test's ports). */
const NO_SERVERS = {
  RUNTIME: 'distributed',
  KAFKA_BROKERS: '127.0.0.1:19591',
  MONGO_URL: 'mongodb://127.0.0.1:19592/',
  REDIS_URL: 'redis://127.0.0.1:19593',
  JWT_HS256_SECRET: 'start-without-servers-0123456789abcdef',
  SUBJECT_KEYS_MASTER_KEY: TEST_SUBJECT_KEYS_MASTER_KEY,
  LOG_LEVEL: 'info',
};

interface Started {
  url: string;
  output(): string;
  stderr(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

function startService(name: string, port: number, env: Record<string, string>): Started {
  const child = spawn(process.execPath, [resolve(REPO_ROOT, `services/${name}/dist/main.js`)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...NO_SERVERS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    stderr: () => stderr,
    exited,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

const answerOf = (url: string) =>
  fetch(url).then(
    async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> }),
    () => undefined,
  );

describe('a service started before its servers (issue 13)', () => {
  test('when no server answers, then it serves /healthz, says on /readyz what it waits for, answers 503 elsewhere, and stops cleanly', async () => {
    const service = startService('read-api', 19580, {
      READ_API_PORT: '19580',
      READ_API_HOST: '127.0.0.1',
      RESPONSE_SIGNING_KEYS: TEST_RESPONSE_SIGNING_KEYS,
    });
    try {
      const health = await eventually(() => answerOf(`${service.url}/healthz`), 15_000, 100);
      expect(health).toEqual({ status: 200, body: { status: 'ok' } });

      const waiting = await eventually(
        async () => {
          const answer = await answerOf(`${service.url}/readyz`);
          return answer?.body.checks && typeof answer.body.checks === 'object' && 'kafka' in answer.body.checks ? answer : undefined;
        },
        15_000,
        100,
      );
      expect(waiting.status).toBe(503);
      expect(waiting.body).toEqual({
        status: 'not ready',
        checks: { kafka: 'failing' },
        reason: expect.stringMatching(/^starting: waiting for kafka/),
      });

      const other = await answerOf(`${service.url}/v1/customers/rs_AAAAAAAAAAAAAAAA/score`);
      expect(other?.status).toBe(503);
      expect(other?.body).toMatchObject({ error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE' });

      const failedAttempts = service
        .output()
        .split('\n')
        .filter((line) => line.includes('start-up attempt failed'))
        .map((line) => JSON.parse(line) as { level: number; dependency: string });
      expect(failedAttempts.length).toBeGreaterThan(0);
      expect(failedAttempts.every(({ level, dependency }) => level === 40 && dependency === 'kafka')).toBe(true);
      expect(service.output()).not.toContain('"level":50');
    } finally {
      expect(await service.stop()).toBe(0);
    }
  }, 40_000);

  test('when START_DEADLINE_MS passes, then it exits 1 with one line saying what it waited for', async () => {
    const service = startService('score-ingest', 19581, {
      SCORE_INGEST_PORT: '19581',
      SCORE_INGEST_HOST: '127.0.0.1',
      START_DEADLINE_MS: '3000',
    });
    try {
      expect(await service.exited).toBe(1);
      expect(service.stderr().trim().split('\n')).toEqual([
        expect.stringMatching(/^gave up starting: START_DEADLINE_MS \(3000 ms\) passed after \d+ attempt\(s\); still waiting for kafka: /),
      ]);
    } finally {
      await service.stop();
    }
  }, 30_000);

  // A secret every replica must share: without it the process refuses to start, naming it, before listening.
  test.each([
    { variable: 'RESPONSE_SIGNING_KEYS', name: 'read-api', port: 19582, message: 'is required on the distributed runtime' },
    // Decision 56: the master key of the subjects' keys, never echoed.
    { variable: 'SUBJECT_KEYS_MASTER_KEY', name: 'score-ingest', port: 19583, message: 'is required when RUNTIME=distributed' },
  ])(
    'when the $name has no $variable on the distributed runtime, then it exits 1 as a configuration error, before listening',
    async ({ variable, name, port, message }) => {
      const prefix = name.toUpperCase().replace('-', '_');
      const service = startService(name, port, { [`${prefix}_PORT`]: String(port), [`${prefix}_HOST`]: '127.0.0.1', [variable]: '' });
      try {
        expect(await service.exited).toBe(1);
        expect(service.stderr()).toMatch(new RegExp(`^invalid configuration:\\n {2}- ${variable}: ${message}`));
        expect(service.stderr()).not.toContain(TEST_SUBJECT_KEYS_MASTER_KEY);
        expect(service.output()).not.toContain('accepting connections');
      } finally {
        await service.stop();
      }
    },
    30_000,
  );
});
