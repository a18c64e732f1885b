/** @type {import('jest').Config} */
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }];

// Tests run on the TypeScript sources; `tsc -b` (run first by `npm test`) does the type checking.
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
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: Object.fromEntries(
    Object.entries(workspaces).map(([name, dir]) => [`^@rsd/${name}$`, `<rootDir>/${dir}/src/index.ts`]),
  ),
  testMatch: ['<rootDir>/{libs,services,tools,test}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  setupFiles: ['<rootDir>/test/setup/loopback-only.js'],
  testTimeout: 20_000,
};
