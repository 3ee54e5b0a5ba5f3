/** A zod schema's complaints about a config section, as problem lines that start with their path. */
import type { z } from 'zod';

/**
 * A schema's complaints as problems, each at its path under `prefix` (`serve.port`); an unknown key
 * is a problem of its own at its own path.
 */
export function issueProblems(issues: readonly z.core.$ZodIssue[], prefix: readonly string[] = []): Array<{ at: string; message: string }> {
  return issues.flatMap((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
    return keys.map((key) => ({
      at: [...prefix, ...issue.path.map(String), ...(key === undefined ? [] : [key])].join('.'),
      message: key === undefined ? issueMessage(issue) : 'unknown key',
    }));
  });
}

/**
 * An issue's message; for a record key the key schema refused, the key schema's own messages (zod
 * says only "Invalid key in record", leaving out the rule the key broke).
 */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_key' && issue.issues.length) return issue.issues.map((i) => i.message).join('; ');
  return issue.message;
}
