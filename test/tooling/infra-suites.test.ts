import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SERVER_URLS = /process\.env(?:\.|\[')(KAFKA_BROKERS|MONGO_URL|REDIS_URL)\b/g;

/**
 * CI runs the infra suites twice: on the servers of `scripts/infra.sh` (their URLs in the environment)
 * and through Testcontainers with no URL set (scripts/ci/containers.sh). A suite that reads a URL
 * from the environment itself passes the first and fails the second; each takes its servers from
 * `startInfra` (or `kafkaForSuite`), which starts a container when no URL is set.
 */
describe('the infrastructure suites', () => {
  it('when a suite needs Kafka, MongoDB or Redis, then it takes the server from startInfra, not from the environment', () => {
    const suites = execFileSync('git', ['ls-files', '*.infra.test.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(suites.length).toBeGreaterThan(10);
    const readers = suites.flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(SERVER_URLS)].map((match) => `${file}: ${match[1]}`),
    );
    expect(readers).toEqual([]);
  });
});
