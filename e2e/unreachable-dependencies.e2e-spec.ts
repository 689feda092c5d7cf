import { findFreePort } from '@igw/persistence';
import { childEnvironment, startService, type ServiceProcess } from './support/service-process';

const ADMIN_TOKEN = 'unreachable-dependencies-admin-token';

/** The exit code, or 'still running' when the process has not given up within the bound. */
async function exitWithin(service: ServiceProcess, boundMs: number): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    service.exited(),
    new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), boundMs))),
  ]);
  clearTimeout(timer);
  if (outcome === 'still running') await service.stop(2_000);
  return outcome;
}

/**
 * A service whose DATABASE_URL or REDIS_URL points where nothing listens (a free port) gives
 * up after DEPENDENCY_WAIT_MS with a non-zero exit and a message naming the variable and the
 * address, not a stack trace or retries for ever.
 */
describe('unreachable DATABASE_URL and REDIS_URL', () => {
  const wait = { DEPENDENCY_WAIT_MS: '1500', LOG_LEVEL: 'log' };

  it('billing with a DATABASE_URL nothing answers exits non-zero naming DATABASE_URL and its address', async () => {
    const port = await findFreePort();
    const service = startService(
      'apps/billing/src/main.js',
      childEnvironment({ ...wait, ADMIN_TOKEN, BILLING_PORT: String(await findFreePort()), DATABASE_URL: `postgres://gateway:not-logged@127.0.0.1:${port}/x` }),
    );
    const code = await exitWithin(service, 30_000);
    expect(code).not.toBe('still running');
    expect(code).not.toBe(0);
    expect(service.output()).toContain(`Cannot reach PostgreSQL at 127.0.0.1:${port} (DATABASE_URL): connection refused`);
    expect(service.output()).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(service.output()).not.toContain('not-logged');
  }, 45_000);

  it('the gateway with a REDIS_URL nothing answers exits non-zero naming REDIS_URL and its address', async () => {
    const port = await findFreePort();
    const service = startService(
      'apps/gateway/src/main.js',
      childEnvironment({ ...wait, ADMIN_TOKEN, PORT: String(await findFreePort()), REDIS_URL: `redis://127.0.0.1:${port}` }),
    );
    const code = await exitWithin(service, 30_000);
    expect(code).not.toBe('still running');
    expect(code).not.toBe(0);
    expect(service.output()).toContain(`Cannot reach Redis at 127.0.0.1:${port} (REDIS_URL): connection refused`);
    expect(service.output()).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  }, 45_000);

  it('the one-command start with a REDIS_URL nothing answers exits non-zero naming REDIS_URL', async () => {
    const port = await findFreePort();
    const ports = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    const service = startService(
      'apps/standalone/src/main.js',
      childEnvironment({
        ...wait,
        REDIS_URL: `redis://127.0.0.1:${port}`,
        PORT: String(ports[0]),
        BILLING_PORT: String(ports[1]),
        CATALOGUE_PORT: String(ports[2]),
        DECISIONS_PORT: String(ports[3]),
      }),
    );
    const code = await exitWithin(service, 30_000);
    expect(code).not.toBe('still running');
    expect(code).not.toBe(0);
    expect(service.output()).toContain(`Cannot reach Redis at 127.0.0.1:${port} (REDIS_URL)`);
  }, 45_000);
});
