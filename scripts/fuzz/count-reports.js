#!/usr/bin/env node
'use strict';
// Totals of one schemathesis run, printed as "<requests> <test cases> <failures>": requests are the
// HAR report's entries (every request schemathesis sent, checks' extra requests included), failures
// and errors the JUnit report's, test cases the "N generated" of its summary.
const fs = require('fs');
const path = require('path');

const [reportDir, outputFile] = process.argv.slice(2);
const files = fs.existsSync(reportDir) ? fs.readdirSync(reportDir).map((name) => path.join(reportDir, name)) : [];

let requests = 0;
let failures = 0;
for (const file of files) {
  if (path.basename(file).startsWith('har-')) {
    requests += JSON.parse(fs.readFileSync(file, 'utf8')).log.entries.length;
  } else if (file.endsWith('.xml')) {
    const suites = /<testsuites\b[^>]*>/.exec(fs.readFileSync(file, 'utf8'));
    const count = (name) => Number((suites && new RegExp(`\\b${name}="(\\d+)"`).exec(suites[0])?.[1]) ?? 0);
    failures += count('failures') + count('errors');
  }
}
const generated = /^\s*(\d+) generated\b/m.exec(fs.existsSync(outputFile) ? fs.readFileSync(outputFile, 'utf8') : '');
process.stdout.write(`${requests} ${generated ? generated[1] : 0} ${failures}\n`);
