/**
 * A suite of real processes on real servers that runs alone, after the others (it stops and starts
 * servers): the e2e settings, with its own name and folder.
 */
const e2e = require('../../jest.e2e.config.js');

module.exports = (displayName, folder) => ({
  ...e2e,
  displayName,
  testMatch: [`<rootDir>/${folder}/**/*.test.ts`],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60_000,
});
