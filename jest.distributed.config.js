/** The distributed end-to-end test: separate processes on real servers, run on its own (it restarts Kafka). */
const e2e = require('./jest.e2e.config.js');

module.exports = {
  ...e2e,
  displayName: 'distributed',
  testMatch: ['<rootDir>/test/distributed/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60_000,
};
