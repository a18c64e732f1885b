/**
 * Decision 48's fault suite: the distributed runtime on the clustered engines of `scripts/infra.sh
 * cluster`, whose nodes it stops and starts; run alone (scripts/ci/faults.sh).
 */
const e2e = require('./jest.e2e.config.js');

module.exports = {
  ...e2e,
  displayName: 'faults',
  testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60_000,
};
