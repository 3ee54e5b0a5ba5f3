/** Who decides an approval from this machine: the one identity the CLI records with a decision. */
import os from 'node:os';

/** `--as NAME` when given, else `user@host` of the person running the CLI. */
export function deciderIdentity(as?: string): string {
  if (as !== undefined && as.trim()) return as.trim();
  return `${os.userInfo().username}@${os.hostname()}`;
}
