// isolatedModules: transpile only, file by file; `tsc -b` (run first by `npm test`) does the type checking.
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.tests.json', diagnostics: false }];

// Tests run on the TypeScript sources (but for worker threads, which start from dist/: built by `tsc -b` first).
const workspaces = {
  'api-documents': 'libs/api-documents',
  contracts: 'libs/contracts',
  domain: 'libs/domain',
  platform: 'libs/platform',
  ports: 'libs/ports',
  consumers: 'libs/consumers',
  embedded: 'libs/embedded',
  testkit: 'libs/testkit',
  kafka: 'libs/kafka',
  mongo: 'libs/mongo',
  redis: 'libs/redis',
  observability: 'libs/observability',
  runtime: 'libs/runtime',
  'recipient-access': 'libs/recipient-access',
  'read-api': 'services/read-api',
  credentials: 'services/credentials',
  'score-ingest': 'services/score-ingest',
  notifier: 'services/notifier',
  console: 'services/console',
};

// The TypeScript SDK as a user installs it (scripts/ci/sdk-packages.sh): the package directory of an
// installation of its npm tarball, outside the workspace. Its tests then run on that package's dist/
// instead of the sources.
const INSTALLED_SDK = process.env.RSD_TS_SDK_PACKAGE;
const escaped = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What every kind of test shares. */
const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: {
    '/sdks/typescript/.+\\.ts$': '<rootDir>/test/setup/esm-as-commonjs.js',
    ...(INSTALLED_SDK ? { [`^${escaped(INSTALLED_SDK)}/.+\\.js$`]: '<rootDir>/test/setup/esm-as-commonjs.js' } : {}),
    '^.+\\.ts$': tsJest,
  },
  ...(INSTALLED_SDK ? { transformIgnorePatterns: ['/node_modules/(?!@resilience-score/client/)'] } : {}),
  moduleNameMapper: {
    ...Object.fromEntries(Object.entries(workspaces).map(([name, dir]) => [`^@rsd/${name}$`, `<rootDir>/${dir}/src/index.ts`])),
    // A package's subpath export (`@rsd/contracts/event-names`): the module of that name in its sources.
    ...Object.fromEntries(Object.entries(workspaces).map(([name, dir]) => [`^@rsd/${name}/([a-z-]+)$`, `<rootDir>/${dir}/src/$1.ts`])),
    // The TypeScript SDK, as the CLI imports it: its sources, which the transform above turns into CommonJS
    // (or the installed package's dist/, when one is named).
    '^@resilience-score/client$': INSTALLED_SDK ? `${INSTALLED_SDK}/dist/index.js` : '<rootDir>/sdks/typescript/src/index.ts',
    // ES modules import './file.js'; the test runs on './file.ts'.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFiles: ['<rootDir>/test/setup/loopback-only.js'],
  // Tool builds and caches: the Kubernetes cluster's containerd keeps the project's image unpacked
  // there (a second copy of every workspace package).
  modulePathIgnorePatterns: ['<rootDir>/.infra/'],
};

// Every test file is of exactly one kind, by its name or folder (`npm run test:<kind>`):
//   infra  *.infra.test.ts            needs Kafka, MongoDB or Redis
//   e2e    test/e2e/, *.e2e.test.ts    starts the product as processes; so does test/distributed, which
//                                      stops and starts Kafka and so runs alone after this run (jest.distributed.config.js)
//   unit   every other *.test.ts      no servers and no processes (in-process HTTP on loopback is fine)
const TESTS = '<rootDir>/{libs,services,tools,test,sdks}/**/';
const ELSEWHERE = ['/node_modules/', '/dist/', '<rootDir>/test/distributed/', '<rootDir>/test/faults/'];
const INFRA = '\\.infra\\.test\\.ts$';
const E2E = ['<rootDir>/test/e2e/', '\\.e2e\\.test\\.ts$'];

const kinds = {
  unit: { testMatch: [`${TESTS}*.test.ts`], testPathIgnorePatterns: [...ELSEWHERE, INFRA, ...E2E] },
  infra: { testMatch: [`${TESTS}*.infra.test.ts`], testPathIgnorePatterns: [...ELSEWHERE, ...E2E] },
  e2e: { testMatch: ['<rootDir>/test/e2e/**/*.test.ts', `${TESTS}*.e2e.test.ts`], testPathIgnorePatterns: ELSEWHERE },
};

/** @type {import('jest').Config} */
module.exports = {
  projects: Object.entries(kinds).map(([displayName, kind]) => ({ displayName, ...shared, ...kind })),
  testTimeout: 20_000,
};
