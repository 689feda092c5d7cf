import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/** How often the holder touches its lock file, and how old a touch may be before the holder is taken for gone. */
export const LOCK_HEARTBEAT_MS = 5_000;
export const LOCK_STALE_MS = 30_000;

const LOCK_FILE = 'lock';

interface LockOwner {
  pid: number;
  host: string;
  since: string;
}

export class DirectoryLockedError extends Error {}

/**
 * An exclusive claim on a directory by one process, as a `lock` file naming its pid and host.
 * The holder touches the file every few seconds. A claim is free when its process is gone:
 * on the same host, when that pid no longer runs (or is our own pid: a container restarted
 * with the same numbering); on any host, when the file has not been touched for
 * LOCK_STALE_MS (a process on another host, e.g. a recreated container sharing the volume).
 * Released on close; a crash leaves the file, which the next start recognises as stale.
 * Not proper-lockfile: it judges a lock by its age alone, so a start right after its holder was
 * killed would be refused for the whole stale period, where the pid check here takes over at once.
 */
export class DirectoryLock {
  private heartbeat?: NodeJS.Timeout;
  private released = false;

  private constructor(
    readonly file: string,
    private readonly owner: LockOwner,
  ) {}

  /** Takes the directory or throws a DirectoryLockedError naming the process that holds it. */
  static acquire(directory: string, purpose: string, now: () => number = Date.now): DirectoryLock {
    mkdirSync(directory, { recursive: true });
    const file = path.join(directory, LOCK_FILE);
    const owner: LockOwner = { pid: process.pid, host: hostname(), since: new Date(now()).toISOString() };
    const content = `${JSON.stringify(owner)}\n`;
    try {
      const fd = openSync(file, 'wx', 0o644);
      try {
        writeSync(fd, content);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(file);
      const ageMs = holder ? now() - holder.touchedAt : Infinity;
      if (holder && isAlive(holder.owner, ageMs)) {
        throw new DirectoryLockedError(
          `${directory} is in use (${purpose}) by process ${holder.owner.pid} on host ${holder.owner.host}, whose lock ${file} was refreshed ${Math.round(ageMs / 1000)} s ago. ` +
            `Two processes must not share it: give each its own directory. If that process is gone, its lock counts as stale ${LOCK_STALE_MS / 1000} s after its last refresh (or delete the file).`,
        );
      }
      // Stale: replace it in one step (a rename never leaves the directory without a lock file).
      const temporary = `${file}.${process.pid}.tmp`;
      const fd = openSync(temporary, 'w', 0o644);
      try {
        writeSync(fd, content);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, file);
    }
    const lock = new DirectoryLock(file, owner);
    lock.heartbeat = setInterval(() => lock.touch(), LOCK_HEARTBEAT_MS);
    lock.heartbeat.unref();
    return lock;
  }

  /** Whether the file still names this process (another process may have judged it stale and taken over). */
  isHeld(): boolean {
    const holder = readHolder(this.file);
    return !!holder && holder.owner.pid === this.owner.pid && holder.owner.host === this.owner.host && holder.owner.since === this.owner.since;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.heartbeat);
    if (this.isHeld()) {
      try {
        unlinkSync(this.file);
      } catch {
        // Already gone: nothing to release.
      }
    }
  }

  private touch(): void {
    try {
      const at = new Date();
      utimesSync(this.file, at, at);
    } catch {
      // The next start judges the lock by its age; a failed touch only makes it look older.
    }
  }
}

function readHolder(file: string): { owner: LockOwner; touchedAt: number } | undefined {
  try {
    const touchedAt = statSync(file).mtimeMs;
    const owner = JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
    if (typeof owner?.pid !== 'number' || typeof owner.host !== 'string') return undefined;
    return { owner, touchedAt };
  } catch {
    // Unreadable or half-written (a crash while creating it): no live process stands behind it.
    return undefined;
  }
}

function isAlive(owner: LockOwner, ageMs: number): boolean {
  if (ageMs > LOCK_STALE_MS) return false;
  if (owner.host !== hostname()) return true;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the pid runs, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
