/**
 * A Temporal dev server process on this machine, told from its command line (Linux /proc): whether
 * a process id is one (an id the OS gave to another program is not), and which database it keeps
 * its data in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from './process-alive';

/**
 * True while a process with this id runs and, on Linux, is a `temporal server start-dev`. Without
 * /proc (another OS, another user's process) the id is all there is.
 */
export function devServerRuns(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('start-dev');
  } catch {
    return true;
  }
}

/** The value of a flag (`--name V`, `-x V`, `--name=V`) in a command line. */
function flagValue(args: readonly string[], names: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (names.includes(arg)) return args[i + 1];
    const long = names.find((n) => n.startsWith('--') && arg.startsWith(`${n}=`));
    if (long) return arg.slice(long.length + 1);
  }
  return undefined;
}

export interface DevServerCommandLine {
  /** Its SQLite file, absolute; undefined: it keeps its data in memory. */
  dbFile?: string;
  /** `ip:port` of its gRPC frontend, as its flags say (Temporal's defaults otherwise). */
  address: string;
}

/**
 * What the command line of process `pid` says, when it is a `temporal server start-dev`; undefined
 * for any other process, or one whose command line cannot be read (gone, another user's, no /proc).
 */
export function devServerCommandLine(pid: number | string): DevServerCommandLine | undefined {
  let args: string[];
  let cwd: string;
  try {
    args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!args.includes('start-dev')) return undefined;
    cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
  const db = flagValue(args, ['--db-filename', '-f']);
  const address = `${flagValue(args, ['--ip']) ?? 'localhost'}:${flagValue(args, ['--port', '-p']) ?? '7233'}`;
  return { ...(db ? { dbFile: path.resolve(cwd, db) } : {}), address };
}

/** The ids of the processes on this machine (Linux /proc); none elsewhere. */
export function processIds(): string[] {
  try {
    return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
}
