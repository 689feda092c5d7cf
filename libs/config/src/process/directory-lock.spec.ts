import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { DirectoryLock, DirectoryLockedError, LOCK_STALE_MS } from './directory-lock';

describe('DirectoryLock', () => {
  let directory: string;
  const lockFile = () => path.join(directory, 'lock');
  const writeLock = (owner: { pid: number; host: string }, ageMs = 0) => {
    writeFileSync(lockFile(), JSON.stringify({ ...owner, since: 'earlier' }));
    const at = new Date(Date.now() - ageMs);
    utimesSync(lockFile(), at, at);
  };

  beforeEach(() => (directory = mkdtempSync(path.join(tmpdir(), 'igw-lock-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('is taken by one process at a time and released on close', () => {
    const lock = DirectoryLock.acquire(directory, 'test');
    expect(JSON.parse(readFileSync(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(lock.isHeld()).toBe(true);
    lock.release();
    expect(existsSync(lockFile())).toBe(false);
    DirectoryLock.acquire(directory, 'test').release();
  });

  it('refuses while a live process on this host holds it, or one on another host refreshed it recently', () => {
    writeLock({ pid: process.ppid, host: hostname() });
    expect(() => DirectoryLock.acquire(directory, 'test')).toThrow(DirectoryLockedError);
    writeLock({ pid: 1, host: 'elsewhere' }, LOCK_STALE_MS / 2);
    expect(() => DirectoryLock.acquire(directory, 'test')).toThrow(/by process 1 on host elsewhere/);
  });

  it.each([
    ['a pid that no longer runs on this host', { pid: 2 ** 22 + 17, host: hostname() }, 0],
    ['our own pid (a restarted container numbers its processes the same way)', { pid: process.pid, host: hostname() }, 0],
    ['a holder on another host that stopped refreshing it', { pid: 1, host: 'elsewhere' }, LOCK_STALE_MS + 1_000],
    ['a live pid whose lock is long unrefreshed (the pid was reused)', { pid: process.ppid, host: hostname() }, LOCK_STALE_MS + 1_000],
  ])('takes over a lock left by %s', (_, owner, ageMs) => {
    writeLock(owner, ageMs);
    const lock = DirectoryLock.acquire(directory, 'test');
    expect(lock.isHeld()).toBe(true);
    lock.release();
  });
});
