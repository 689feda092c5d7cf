/** Errors of a write to an output nobody reads any more: the pipe's reader exited, the terminal closed. */
const CLOSED_OUTPUT_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'EIO', 'ECONNRESET']);

let installed = false;

/**
 * Keeps a service running when its stdout or stderr closes (`npm start | tee log` and Ctrl-C
 * stops `tee` too): without a listener, the write error is an unhandled 'error' event that kills
 * the process before its shutdown drains requests and writes the usage journal. Lines written
 * after that are lost; any other write error still surfaces.
 */
export function surviveClosedOutput(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== undefined && CLOSED_OUTPUT_CODES.has(error.code)) return;
      throw error;
    });
  }
}
