// Three kinds of tests: unit and replay need no server; workflow and integration tests share one real
// Temporal dev server started by the global setup (test/support/global-setup.ts).
// jose ships only ES modules: Jest's own module system loads CommonJS, so its files are compiled too.
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
  '/node_modules/jose/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
};
const transformIgnorePatterns = ['/node_modules/(?!jose/)'];
const base = { testEnvironment: 'node', transform, transformIgnorePatterns, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  transform,
  transformIgnorePatterns,
  // Two test files at a time even on two cores: the end-to-end files spend most of their time waiting
  // on servers, timers and child processes, not on this machine's CPU.
  maxWorkers: Math.max(2, require('node:os').availableParallelism() - 1),
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...base, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.test.ts'] },
    { ...base, displayName: 'workflow', testMatch: ['<rootDir>/test/workflow/**/*.test.ts'] },
    { ...base, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
    { ...base, displayName: 'ui', testMatch: ['<rootDir>/test/ui/**/*.test.ts'] },
  ],
};
