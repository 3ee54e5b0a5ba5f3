// `npm run test:cluster`: the suite that runs against a real Temporal cluster named by
// TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE), apart from `npm test`, which starts its own dev server.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };

module.exports = {
  displayName: 'cluster',
  testEnvironment: 'node',
  transform,
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
  globalSetup: '<rootDir>/test/cluster/cluster-setup.ts',
  globalTeardown: '<rootDir>/test/cluster/cluster-teardown.ts',
};
