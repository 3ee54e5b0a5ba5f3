/**
 * The tool-name pattern language of every config and turn setting that names tools (tools.allow and
 * tools.deny, a turn's approval.tools, a server's approval policy): `*` matches any run of
 * characters (none included), everything else itself.
 */

/** A tool's full name, `server__tool`: what patterns match first, and what Claude tool names are made from. */
export function serverToolName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

/** A name pattern: `*` matches any run of characters (none included), everything else itself. */
export function matchesGlob(pattern: string, text: string): boolean {
  if (!pattern.includes('*')) return pattern === text;
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(text);
}

/**
 * A tool pattern, matched (with `*` as in {@link matchesGlob}) against `server__tool`, the bare
 * tool name and the Claude-side name: `fs__write_file`, `write_file`, `fs__*`, `*write*`.
 */
export function matchesToolPattern(pattern: string, server: string, tool: string, name: string): boolean {
  return [serverToolName(server, tool), tool, name].some((text) => matchesGlob(pattern, text));
}
