/**
 * Output to a closed pipe (`mcp-turns watch ID | head -1`): the reader has gone, so the command
 * ends quietly with 141, the code of a process a shell saw stopped by SIGPIPE, and never with a
 * stack. A command whose work must outlive its output (`run` with its own worker: the turn needs it
 * until it ends) holds the exit with {@link holdExitOnClosedOutput}: it goes on silently, its
 * writes dropped, and ends as it would have.
 */

/** What a shell reports for a process stopped by SIGPIPE (128 + 13). */
export const EXIT_CLOSED_OUTPUT = 141;

let holds = 0;
let closed = false;

/** While the returned release is not called, a closed output does not end the process. */
export function holdExitOnClosedOutput(): () => void {
  holds++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holds--;
  };
}

function dropWrites(stream: NodeJS.WriteStream): void {
  stream.write = ((_chunk: unknown, encodingOrDone?: unknown, done?: unknown) => {
    const callback = typeof encodingOrDone === 'function' ? encodingOrDone : done;
    if (typeof callback === 'function') process.nextTick(callback as () => void);
    return true;
  }) as NodeJS.WriteStream['write'];
}

/** Installs the rule on stdout and stderr (see the file comment); once, before anything is written. */
export function endQuietlyOnClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
      dropWrites(stream);
      if (closed) return;
      closed = true;
      if (holds === 0) process.exit(EXIT_CLOSED_OUTPUT);
    });
  }
}

