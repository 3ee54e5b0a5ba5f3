/** Text for one line of a summary, a terminal or an error message. Sandbox-safe. */

/**
 * `text` on one line: each run of whitespace becomes one space and the ends are trimmed. Text longer
 * than `max` characters is cut to `max` characters, the last of them `ellipsis`.
 */
export function oneLine(text: string, max: number, ellipsis = '…'): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - ellipsis.length)}${ellipsis}`;
}

/** `size` in the unit a person reads: "812 B", "3.0 MiB". */
export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}
