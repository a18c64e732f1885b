import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './embedded-process';

/*
 * Decision 55's certificates checked by tools that are not the product's: a JWS by joserfc (Python,
 * from the pinned environment of scripts/python-env.sh) against a key set as the read API publishes
 * it, and a PDF by Debian's poppler-utils (scripts/pdf-tools.sh).
 */

const run = promisify(execFile);
const PYTHON = join(REPO_ROOT, '.tools/python/bin/python');

/** The Python environment and the PDF tools, installed when missing (each is quick when they are there). */
export async function installCertificateTools(): Promise<void> {
  await run('bash', [join(REPO_ROOT, 'scripts/python-env.sh')]);
  await run('bash', [join(REPO_ROOT, 'scripts/pdf-tools.sh')]);
}

export type Verified =
  { valid: true; header: { alg: string; kid: string; typ?: string }; payload: unknown } | { valid: false; why: string };

/** The JWS verified by joserfc against `keySet` (a JWKS document): test/support/verify-certificate.py. */
export async function verifiedByJoserfc(jws: string, keySet: unknown): Promise<Verified> {
  const dir = await mkdtemp(join(tmpdir(), 'rsd-jwks-'));
  try {
    const keysFile = join(dir, 'jwks.json');
    await writeFile(keysFile, JSON.stringify(keySet));
    const { code, stdout } = await withInput(PYTHON, [join(REPO_ROOT, 'test/support/verify-certificate.py'), keysFile], jws);
    if (code !== 0) return { valid: false, why: stdout.trim() };
    return { valid: true, ...(JSON.parse(stdout) as { header: { alg: string; kid: string }; payload: unknown }) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The JWS with one byte of its payload changed (a character of the base64url swapped for another). */
export function withOneByteChanged(jws: string): string {
  const [header, payload, signature] = jws.split('.') as [string, string, string];
  const at = Math.floor(payload.length / 2);
  const swapped = payload[at] === 'A' ? 'B' : 'A';
  return [header, `${payload.slice(0, at)}${swapped}${payload.slice(at + 1)}`, signature].join('.');
}

/** What poppler reads of a PDF: the page's text (pdftotext) and the document's Keywords (pdfinfo). */
export async function readPdf(pdf: Buffer): Promise<{ text: string; pages: number; keywords: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'rsd-pdf-'));
  try {
    const file = join(dir, 'certificate.pdf');
    await writeFile(file, pdf);
    const { stdout: text } = await run('pdftotext', ['-layout', file, '-']);
    const { stdout: info } = await run('pdfinfo', [file]);
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(info)?.[1]?.trim() ?? '';
    return { text, pages: Number(field('Pages')), keywords: field('Keywords') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function withInput(command: string, args: string[], input: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout }));
    child.stdin.end(input);
  });
}
