/**
 * A small deterministic string hash (FNV-1a, 32-bit) for names and ids that must be stable across
 * replays and processes. Not for security: the workflow sandbox has no crypto, and none is needed.
 */
export function fnv1a32(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Base-36 hash, fixed width 7 (covers 32 bits). */
export function shortHash(text: string): string {
  return fnv1a32(text).toString(36).padStart(7, '0');
}
