/** Whether a value can be read as a record of named fields: an object, not an array, not null. Sandbox-safe. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
