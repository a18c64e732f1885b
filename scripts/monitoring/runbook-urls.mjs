#!/usr/bin/env node
// Prints the alerting rules with every alert's runbook_url on another base: the part before `#` (the
// runbooks page) replaced, the section kept. The rules in the repository link to the repository's own
// copy of docs/operators/runbooks.md (package.json "repository"); an operator whose runbooks live
// elsewhere (a fork, an internal Git server, a wiki holding the same sections) loads this output instead.
// Comments and layout are kept: only the runbook_url lines change.
//
//   node scripts/monitoring/runbook-urls.mjs --base URL [RULES]   RULES: default deploy/monitoring/alerts.rules.yml
//   node scripts/monitoring/runbook-urls.mjs --default             print the repository's base
//
// On Kubernetes the production overlay does the same with RUNBOOK_BASE_URL (k8s/overlays/production/runbooks.env).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNBOOKS_PAGE = 'docs/operators/runbooks.md';
const RUNBOOK_URL = /^(\s*runbook_url:\s*)(['"]?)([^#'"\s]*)(#[A-Za-z0-9_-]+)\2(\s*)$/;

/** The repository's web address from package.json, and its runbooks page on the default branch. */
export function defaultBase() {
  const { repository } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const url = (typeof repository === 'string' ? repository : (repository?.url ?? '')).replace(/^git\+/, '').replace(/\.git$/, '');
  if (!/^https:\/\/\S+$/.test(url)) throw new Error('package.json has no https "repository" url');
  return `${url}/blob/main/${RUNBOOKS_PAGE}`;
}

/** The rules' text with every runbook_url on `base`; throws when there is none to change. */
export function rebase(text, base) {
  let changed = 0;
  const out = text
    .split('\n')
    .map((line) => {
      const match = RUNBOOK_URL.exec(line);
      if (!match) return line;
      changed += 1;
      return `${match[1]}${base}${match[4]}${match[5]}`;
    })
    .join('\n');
  if (changed === 0) throw new Error('no runbook_url found');
  return out;
}

function usage(message) {
  console.error(`runbook-urls: ${message}\nusage: node scripts/monitoring/runbook-urls.mjs --base URL [RULES] | --default`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args[0] === '--default' && args.length === 1) {
  console.log(defaultBase());
} else if (args[0] === '--base' && (args.length === 2 || args.length === 3)) {
  const base = args[1];
  let parsed;
  try {
    parsed = new URL(base);
  } catch {
    usage(`not an absolute URL: ${base}`);
  }
  if (!['https:', 'http:'].includes(parsed.protocol) || base.includes('#')) usage(`the base is an http(s) URL without a #section: ${base}`);
  const rules = args[2] ?? join(ROOT, 'deploy/monitoring/alerts.rules.yml');
  try {
    process.stdout.write(rebase(readFileSync(rules, 'utf8'), base));
  } catch (error) {
    console.error(`runbook-urls: ${rules}: ${error.message}`);
    process.exit(1);
  }
} else {
  usage('wrong arguments');
}
