#!/usr/bin/env node
// Runs the compiled CLI (built by `npm install` through the `prepare` script).
let cli;
try {
  cli = require('../dist/src/cli/main.js');
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli/main')) {
    console.error('mcp-turns: not built yet; run `npm run build` (npm install does it via prepare).');
    process.exit(1);
  }
  throw err;
}
cli.main(process.argv).catch((err) => {
  console.error(`mcp-turns: ${err && err.message ? err.message : err}`);
  process.exit(1);
});
