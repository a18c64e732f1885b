import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.js', '**/*.mjs', '.infra/**', '.data/**', 'bench/floor/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: [
          './libs/*/tsconfig.json',
          './services/*/tsconfig.json',
          './tools/*/tsconfig.json',
          './sdks/typescript/tsconfig.json',
          './bench/tsconfig.json',
          './tsconfig.tests.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A service is built on the ports, the domain and the platform: the runtime hands it what it uses.
    // Only an entry point (main.ts) chooses and runs the runtime; tests may build one to run a service on.
    files: ['services/*/src/**/*.ts'],
    ignores: ['**/main.ts', '**/*.test.ts', '**/testing/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['@rsd/runtime', '@rsd/embedded', '@rsd/kafka', '@rsd/mongo', '@rsd/redis'].map((name) => ({
            name,
            message: 'A service sees only ports: take it from the ServiceContext the runtime hands it (only main.ts runs the runtime).',
          })),
        },
      ],
    },
  },
  {
    ignores: ['libs/platform/src/service-unavailable.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='ApiError'][arguments.0.value='SERVICE_UNAVAILABLE']",
          message: 'Make a 503 with serviceUnavailable() (@rsd/platform): it gives the error the Retry-After every 503 carries.',
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'libs/testkit/**', 'test/**', 'sdks/typescript/test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Tests read arbitrary JSON answers; `any` there keeps assertions readable.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
