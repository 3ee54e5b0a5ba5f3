// Three kinds of tests: unit and replay need no server; workflow and integration tests share one real
// Temporal dev server started by the global setup (test/support/global-setup.ts).
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
const base = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  transform,
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
