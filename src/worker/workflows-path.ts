import path from 'node:path';
import fs from 'node:fs';

/**
 * The workflow bundle's entry file: the compiled `dist/workflows/index.js` when running from dist,
 * the TypeScript source when running from source (tests); Temporal's bundler handles both.
 */
export function workflowsPath(): string {
  const base = path.resolve(__dirname, '..', '..', 'workflows', 'index');
  for (const ext of ['.js', '.ts']) if (fs.existsSync(base + ext)) return base + ext;
  throw new Error(`mcp-turns: workflow code not found at ${base}.{js,ts}`);
}
