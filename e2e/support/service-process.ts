import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export interface ServiceProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves when the output matches, rejects if the process exits first or time runs out. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGINT, then SIGKILL if it has not exited in time; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  exited(): Promise<number | null>;
}

/** Starts one of the built entry points (dist/...) as a real process, as a user would. */
export function startService(entry: string, env: NodeJS.ProcessEnv, args: string[] = []): ServiceProcess {
  // Each process gets a data folder of its own (the gateway's usage journal is locked to one
  // process), removed when it exits, unless the test chose one.
  const ownDataDir = env.DATA_DIR || env.USAGE_JOURNAL_DIR ? undefined : mkdtempSync(path.join(tmpdir(), 'igw-service-'));
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', entry), ...args], {
    cwd: ROOT,
    env: { ...env, ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}), NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  exit.then(() => listeners.forEach((listener) => listener()));

  return {
    child,
    output: () => output,
    exited: () => exit,
    waitForOutput(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`timed out waiting for ${pattern} from ${entry}. Output:\n${output.slice(-4000)}`)), timeoutMs);
        const check = () => {
          const match = output.match(pattern);
          if (match) finish(undefined, match);
          else if (child.exitCode !== null) finish(new Error(`${entry} exited with ${child.exitCode} before ${pattern}. Output:\n${output.slice(-4000)}`));
        };
        const finish = (error?: Error, match?: RegExpMatchArray) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve(match!);
        };
        listeners.add(check);
        check();
      });
    },
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exit;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Environment for a child service: ours minus anything that would change its mode. */
export function childEnvironment(overrides: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of Object.keys(base)) {
    if (/^(DATABASE_URL|REDIS_URL|ADMIN_TOKEN|QUEUE_PREFIX|DATA_DIR|USAGE_JOURNAL_DIR|CATALOGUE_FILE|[A-Z0-9_]+_(API_KEY|BASE_URL))$/.test(name)) delete base[name];
  }
  return { ...base, LOG_LEVEL: 'warn', ...overrides };
}

/**
 * Starts an entry point and waits until its /healthz answers; a process that exits or never
 * becomes healthy fails the call (and is stopped), with its output in the error.
 */
export async function startHealthyService(entry: string, port: number, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ServiceProcess> {
  const service = startService(entry, env);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (service.child.exitCode !== null) throw new Error(`${entry} exited with ${service.child.exitCode}: ${service.output().slice(-4000)}`);
    const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
    // Healthy and the port's listener is this child: another test's service on the same port (a
    // free port taken by two before either listened) answers healthy too, while this one fails to listen.
    if (healthy && listensOn(service.child.pid, port)) return service;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${entry} was not healthy within ${timeoutMs} ms: ${service.output().slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Whether process `pid` holds the socket listening on TCP `port` (Linux's /proc: the socket's
 * inode among the process's open files). Where /proc cannot tell, the listener is taken as ours.
 */
function listensOn(pid: number | undefined, port: number): boolean {
  if (pid === undefined || !existsSync('/proc/net/tcp')) return true;
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const listening = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address, state 0A (LISTEN), inode.
      if (fields.length > 9 && fields[1].endsWith(hexPort) && fields[3] === '0A') listening.add(`socket:[${fields[9]}]`);
    }
  }
  if (listening.size === 0) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return listening.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
  } catch {
    return true;
  }
}
