/**
 * Loading a tool module named in the config: Node's own `import()` of its file (an ES module or a
 * CommonJS one), whose `tools` export (or a CommonJS module's `module.exports.tools`) is read by
 * code-tool.ts. A module written in TypeScript is loaded the same way: compile it first, or run the
 * worker where Node strips types itself.
 */
import { pathToFileURL } from 'node:url';

/** The module's `tools` export. Throws what loading the module throws. */
export async function importToolsExport(file: string): Promise<unknown> {
  const mod = (await import(pathToFileURL(file).href)) as { tools?: unknown; default?: { tools?: unknown } };
  return mod.tools ?? mod.default?.tools;
}
