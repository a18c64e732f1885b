#!/usr/bin/env node
'use strict';
// Runs before anything is installed or built (`npm start`'s prestart, .ci/run), so it has no
// dependencies and old syntax only: on too old a Node.js it must still load, and say one clear line.
const fs = require('fs');
const path = require('path');

/** `>=MAJOR[.MINOR[.PATCH]]`, the one form of engines.node this project uses. */
const RANGE = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/;

function parts(version) {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version);
  return match ? [Number(match[1]), Number(match[2] || 0), Number(match[3] || 0)] : undefined;
}

function atLeast(actual, minimum) {
  for (let i = 0; i < 3; i += 1) if (actual[i] !== minimum[i]) return actual[i] > minimum[i];
  return true;
}

/** Why `version` cannot run the package described by `pkg`, or undefined when it can. */
function nodeVersionProblem(pkg, version) {
  const range = pkg.engines && pkg.engines.node;
  const minimum = typeof range === 'string' && RANGE.test(range.trim()) ? parts(range.trim().replace(/^>=\s*/, '')) : undefined;
  if (!minimum) return `${pkg.name}: package.json engines.node must read ">=MAJOR[.MINOR[.PATCH]]", not ${JSON.stringify(range)}`;
  const actual = parts(String(version));
  if (actual && atLeast(actual, minimum)) return undefined;
  return `${pkg.name} needs Node.js ${range.trim()} (this is v${String(version).replace(/^v/, '')}); see .node-version`;
}

/** Checks `version` (default: this process's) against the repository's package.json; the exit code. */
function main(version) {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  const problem = nodeVersionProblem(pkg, version === undefined ? process.versions.node : version);
  if (!problem) return 0;
  process.stderr.write(`${problem}\n`);
  return 1;
}

module.exports = { nodeVersionProblem, main };

if (require.main === module) process.exitCode = main();
