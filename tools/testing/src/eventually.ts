/**
 * Polls until the check passes or the time is up; returns how long it took. A check that throws
 * (a kept-alive connection the server closed as it was reused: ECONNRESET) is tried again; the
 * last error is named if the time runs out.
 */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 25): Promise<number> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return Date.now() - started;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`condition not met within ${timeoutMs} ms${lastError === undefined ? '' : `; the last check threw: ${lastError instanceof Error ? `${lastError.message}${lastError.cause instanceof Error ? ` (${lastError.cause.message})` : ''}` : String(lastError)}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
