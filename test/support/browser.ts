import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from './embedded-process';

/**
 * Debian's Chromium (scripts/browser.sh installs it), driven by Playwright: nothing is downloaded
 * at run time. CHROMIUM_PATH names another build. A missing browser fails the suite, it is not skipped.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(`no Chromium at ${executablePath}: run \`bash scripts/browser.sh\` (Debian's chromium package) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}

/** What the console's own pages wrote to the browser console as errors, and any uncaught page error. */
export function watchConsoleErrors(page: Page, origin: string): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && page.url().startsWith(origin)) errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  return errors;
}

/** The browser has no way off loopback: every other request is refused before it leaves. */
export async function loopbackOnly(page: Page): Promise<void> {
  await page.route(
    (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
    (route) => route.abort('blockedbyclient'),
  );
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

let axeSource: string | undefined;

/**
 * axe-core on the page as it is, evaluated through the DevTools protocol (so the console's strict
 * CSP stays on): the serious and critical violations, each named with where it is.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}

/** Screenshots for the README with UPDATE_SCREENSHOTS=true (docs/screenshots), else beside the test's temporary files. */
export async function screenshot(page: Page, name: string, scratchDir: string): Promise<void> {
  const dir = process.env.UPDATE_SCREENSHOTS === 'true' ? join(REPO_ROOT, 'docs/screenshots') : scratchDir;
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `console-${name}.png`), fullPage: true });
}
