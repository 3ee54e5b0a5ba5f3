#!/usr/bin/env node
// Runs test/conformance/client.ts, and the project's TypeScript it imports, compiled by swc on load
// the way jest compiles the tests (no build step, no emitted files).
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};

require(path.join(__dirname, 'client.ts'));
