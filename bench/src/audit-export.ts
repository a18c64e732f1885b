import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openSqliteAuditLogStore } from '@rsd/embedded';
import { signDevToken } from '@rsd/platform';
import { EPHEMERAL_PORTS, ROOT } from './processes';
import { parseJsonLine } from './product-process';

// `npm run bench:audit`: decision 54's promise that the audit trail's CSV export streams at any size in
// constant memory. Writes AUDIT_ENTRIES (100,000) entries of one organization into a new embedded
// database's audit store, starts the embedded product on it (one process, as `npm start`), exports the
// whole trail as CSV over HTTP, counting the lines as they come (the bench keeps none), and prints the
// time, the size, and the server's resident memory before the export and at its peak (VmHWM, Linux).

const ENTRIES = Number(process.env.AUDIT_ENTRIES ?? 100_000);
const ORG = 'bench-audit';

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rsd-bench-audit-'));
  try {
    const writing = performance.now();
    const store = openSqliteAuditLogStore({ file: join(dataDir, 'rsd.sqlite') });
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let at = 0; at < ENTRIES; at += 1_000) {
      await store.add(
        Array.from({ length: Math.min(1_000, ENTRIES - at) }, (_, n) => ({
          eventId: randomUUID(),
          organizationId: ORG,
          at: new Date(start + (at + n) * 1_000).toISOString(),
          action: (at + n) % 3 === 0 ? ('authorization.revoked' as const) : ('authorization.created' as const),
          actor: { type: 'person' as const, id: `https://idp.example.com/|user-${(at + n) % 50}`, via: 'api' as const },
          requestId: randomUUID(),
          address: '203.0.113.7',
          clientId: `rs_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
        })),
      );
    }
    await store.close();
    const written = performance.now() - writing;

    const secret = 'bench-audit-secret-that-is-long-enough-0123456789';
    const child = spawn(process.execPath, [join(ROOT, 'services/embedded/dist/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        JWT_HS256_SECRET: secret,
        LOG_LEVEL: 'info',
        ...EPHEMERAL_PORTS,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const credentials = await new Promise<string>((done, fail) => {
        let buffered = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString('utf8');
          for (const line of buffered.split('\n')) {
            const entry = parseJsonLine(line);
            if (entry?.msg === 'embedded runtime ready' && typeof entry.credentials === 'string') done(entry.credentials);
          }
          buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
        });
        child.once('exit', (code) => fail(new Error(`the product exited (${code}) before it was ready`)));
      });
      const token = await signDevToken(secret, { org: ORG, scope: 'authorizations:read' });
      const before = await memoryOf(child.pid);
      const exporting = performance.now();
      const response = await fetch(`${credentials}/v1/organizations/${ORG}/audit-log`, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/csv' },
      });
      if (response.status !== 200 || !response.body) throw new Error(`the export answered ${response.status}`);
      let bytes = 0;
      let lines = 0;
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        for (const byte of chunk) if (byte === 10) lines += 1;
      }
      const exported = performance.now() - exporting;
      const after = await memoryOf(child.pid);
      if (lines !== ENTRIES + 1) throw new Error(`the export had ${lines} lines, not ${ENTRIES + 1}`);
      process.stdout.write(
        JSON.stringify(
          {
            entries: ENTRIES,
            writeSeconds: +(written / 1000).toFixed(2),
            exportSeconds: +(exported / 1000).toFixed(2),
            exportMegabytes: +(bytes / 1_048_576).toFixed(1),
            serverRssMbBeforeExport: before.rssMb,
            serverPeakRssMbBeforeExport: before.peakMb,
            serverRssMbAfterExport: after.rssMb,
            serverPeakRssMb: after.peakMb,
          },
          null,
          2,
        ) + '\n',
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((done) => child.once('exit', done));
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The process's resident memory now and at its peak, in MB, from /proc (Linux). */
async function memoryOf(pid: number | undefined): Promise<{ rssMb: number; peakMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
