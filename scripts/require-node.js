#!/usr/bin/env node
'use strict';
// Runs before anything is built (`npm start`'s prestart), so it has no dependencies and old syntax
// only: on too old a Node.js it must still load, and say one clear line. npm scripts run on the
// Node.js of .node-version, which the install brings (the `node` development dependency puts it first
// on their PATH, decision 35); this catches the ways around it: `node services/…` typed by hand on an
// older Node.js, or an install with --ignore-scripts, which skips the download.
const fs = require('fs');
const path = require('path');

function major(version) {
  const match = /^v?(\d+)\./.exec(String(version).trim());
  return match ? Number(match[1]) : undefined;
}

/** Why Node.js `version` cannot run a project pinned to `pinned` (.node-version), or undefined when it can. */
function nodeVersionProblem(name, pinned, version) {
  const wanted = major(pinned);
  if (wanted === undefined) return `${name}: .node-version must name a version such as 26.10.0, not ${JSON.stringify(pinned)}`;
  const actual = major(version);
  if (actual !== undefined && actual >= wanted) return undefined;
  const shown = `v${String(version).replace(/^v/, '')}`;
  return (
    `${name} runs on Node.js ${wanted} (.node-version: ${pinned.trim()}; this is ${shown}): ` +
    'run it through npm (npm start, npm test, npx rsd), which uses the Node.js that npm install brought'
  );
}

/** Checks `version` (default: this process's) against the repository's .node-version; the exit code. */
function main(version) {
  const root = path.join(__dirname, '..');
  const name = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).name;
  const pinned = fs.readFileSync(path.join(root, '.node-version'), 'utf8');
  const problem = nodeVersionProblem(name, pinned, version === undefined ? process.versions.node : version);
  if (!problem) return 0;
  process.stderr.write(`${problem}\n`);
  return 1;
}

module.exports = { nodeVersionProblem, main };

if (require.main === module) process.exitCode = main();
