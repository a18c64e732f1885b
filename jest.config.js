/** @type {import('jest').Config} */
// isolatedModules: transpile only, file by file; `tsc -b` (run first by `npm test`) does the type checking.
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.tests.json', diagnostics: false }];

// Tests run on the TypeScript sources.
const workspaces = {
  contracts: 'libs/contracts',
  platform: 'libs/platform',
  ports: 'libs/ports',
  embedded: 'libs/embedded',
  testkit: 'libs/testkit',
  kafka: 'libs/kafka',
  mongo: 'libs/mongo',
  redis: 'libs/redis',
  observability: 'libs/observability',
  runtime: 'libs/runtime',
  'read-api': 'services/read-api',
  credentials: 'services/credentials',
  'score-ingest': 'services/score-ingest',
};

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  moduleNameMapper: Object.fromEntries(
    Object.entries(workspaces).map(([name, dir]) => [`^@rsd/${name}$`, `<rootDir>/${dir}/src/index.ts`]),
  ),
  testMatch: ['<rootDir>/{libs,services,tools,test}/**/*.test.ts'],
  // The distributed end-to-end test stops and starts Kafka: it runs alone, after this run (jest.distributed.config.js).
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '<rootDir>/test/distributed/'],
  setupFiles: ['<rootDir>/test/setup/loopback-only.js'],
  testTimeout: 20_000,
};
