import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { childEnvironment, startService, type ServiceProcess } from './service-process';

const ROOT = path.resolve(__dirname, '../..');

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ListedKey {
  id: string;
  name: string | null;
  prefix: string;
  revokedAt: string | null;
}

/**
 * `npm start -- --demo` (the emulator plays every provider) on free ports and its own data
 * folder, or the run's DATABASE_URL/REDIS_URL, plus the operator's tools (the admin CLI,
 * reconcile) run as built processes against it.
 */
export class DemoStandalone {
  server: ServiceProcess | undefined;
  /** What the last stopped server printed, start to exit. */
  lastOutput = '';
  /** Set when the run uses an external PostgreSQL (CI's other mode); undefined means embedded. */
  database: ScratchDatabase | undefined;

  private constructor(
    readonly dataDir: string,
    readonly env: NodeJS.ProcessEnv,
    readonly gateway: string,
    readonly billing: string,
  ) {}

  static async create(): Promise<DemoStandalone> {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-admin-tools-'));
    const ports = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    const external: NodeJS.ProcessEnv = {};
    let database: ScratchDatabase | undefined;
    if (process.env.DATABASE_URL) {
      database = await createTestDatabase();
      external.DATABASE_URL = database.url;
    }
    if (process.env.REDIS_URL) Object.assign(external, { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() });
    const env = childEnvironment({
      ...external,
      DATA_DIR: dataDir,
      PORT: String(ports[0]),
      BILLING_PORT: String(ports[1]),
      CATALOGUE_PORT: String(ports[2]),
      DECISIONS_PORT: String(ports[3]),
    });
    const harness = new DemoStandalone(dataDir, env, `http://127.0.0.1:${ports[0]}`, `http://127.0.0.1:${ports[1]}`);
    harness.database = database;
    return harness;
  }

  async start(): Promise<void> {
    this.server = startService('apps/standalone/src/main.js', this.env, ['--demo']);
    await this.server.waitForOutput(/Press Ctrl-C to stop/, 90_000);
  }

  /** Ctrl-C; resolves with the exit code. */
  async stop(): Promise<number | null> {
    const code = (await this.server?.stop()) ?? null;
    if (this.server) this.lastOutput = this.server.output();
    this.server = undefined;
    return code;
  }

  async dispose(): Promise<void> {
    await this.stop();
    await dropQueueData({ url: this.env.REDIS_URL, prefix: this.env.QUEUE_PREFIX });
    await this.database?.drop();
    await rm(this.dataDir, { recursive: true, force: true });
  }

  async adminToken(): Promise<string> {
    return (await readFile(path.join(this.dataDir, 'admin-token'), 'utf8')).trim();
  }

  /** The admin CLI with only the given environment (none of ours: no ADMIN_TOKEN), token from the data folder. */
  cli(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
    return runNode('tools/cli/src/main.js', args, { BILLING_URL: this.billing, GATEWAY_URL: this.gateway, DATA_DIR: this.dataDir, ...extraEnv });
  }

  /** A CLI call that must succeed quietly; its JSON output. */
  async cliJson<T>(args: string[]): Promise<T> {
    const result = await this.cli(args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(result.stdout) as T;
  }
}

/** A built entry point (dist/...) as a process, with PATH and HOME plus `env` only. */
export function runNode(entry: string, args: string[], env: NodeJS.ProcessEnv): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', entry), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
