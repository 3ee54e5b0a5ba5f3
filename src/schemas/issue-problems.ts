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
      message: key === undefined ? issue.message : 'unknown key',
    }));
  });
}
