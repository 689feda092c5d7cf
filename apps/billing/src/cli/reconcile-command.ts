import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedPostgres } from '@igw/persistence';
import { EnvironmentError, loadEnvironment } from '@igw/config';
import { Client } from 'pg';
import { reconcileBalances } from '../ledger/reconciliation';

export interface CommandIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  env: Readonly<Record<string, string | undefined>>;
}

export const RECONCILED = 0;
export const MISMATCHES_FOUND = 1;
export const COULD_NOT_CHECK = 2;

/**
 * `npm run reconcile`: checks every account balance against its ledger on DATABASE_URL (else
 * on the standalone server's embedded database in DATA_DIR) and prints the JSON report. Exit
 * code 0 when all agree, 1 when any mismatch exists, 2 when the check could not run (no
 * database, database unreachable, no billing schema).
 */
export async function runReconcile(io: CommandIo): Promise<number> {
  let databaseUrl: string | undefined;
  let dataDir: string;
  try {
    const { env } = loadEnvironment({ ...io.env, DATABASE_URL: io.env.DATABASE_URL?.trim() });
    databaseUrl = env.DATABASE_URL;
    dataDir = env.DATA_DIR;
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    io.stderr.write(`error: ${error.message}\n`);
    return COULD_NOT_CHECK;
  }
  if (databaseUrl) return reconcileOn(databaseUrl, io);

  const embedded = await embeddedDatabase(dataDir, io).catch((error: unknown) => {
    io.stderr.write(`error: could not open the embedded database in ${path.resolve(dataDir, 'postgres')}: ${describe(error)}\n`);
    return null;
  });
  if (embedded === null) return COULD_NOT_CHECK;
  if (embedded === undefined) {
    io.stderr.write(
      `error: DATABASE_URL is not set and ${path.resolve(dataDir, 'postgres')} holds no embedded database (set DATA_DIR to the standalone server's).\n` +
        'Point DATABASE_URL at the PostgreSQL database billing uses, e.g.\n' +
        '  DATABASE_URL=postgres://user:password@host:5432/gateway npm run reconcile\n',
    );
    return COULD_NOT_CHECK;
  }
  try {
    return await reconcileOn(embedded.url, io);
  } finally {
    await embedded.stop();
  }
}

const EMBEDDED_DATABASE = 'gateway';

/**
 * The standalone server's embedded PostgreSQL: the running one (its port is in postmaster.pid,
 * its password beside the cluster), else started here for the check and stopped after.
 * Undefined when DATA_DIR holds no cluster.
 */
async function embeddedDatabase(dataDir: string, io: CommandIo): Promise<{ url: string; stop(): Promise<void> } | undefined> {
  const clusterDir = path.resolve(dataDir, 'postgres');
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) return undefined;
  const password = (await readFile(path.resolve(dataDir, 'postgres-password'), 'utf8')).trim();
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    // postmaster.pid: pid, data directory, start time, port, ... one per line.
    const port = Number((await readFile(pidFile, 'utf8')).split('\n')[3]);
    if (Number.isInteger(port) && port > 0) {
      io.stderr.write(`reconciling on the running embedded database in ${clusterDir} (port ${port})\n`);
      return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`, stop: async () => undefined };
    }
  }
  io.stderr.write(`starting the embedded database in ${clusterDir} for the check\n`);
  const server = await startEmbeddedPostgres({ dataDir, database: EMBEDDED_DATABASE });
  return { url: server.url, stop: () => server.stop() };
}

async function reconcileOn(databaseUrl: string, io: CommandIo): Promise<number> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'igw-reconcile' });
  try {
    await client.connect();
    const report = await reconcileBalances(client);
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (report.mismatches.length === 0 && report.usageMismatches.length === 0 && report.keyMismatches.length === 0) return RECONCILED;
    if (report.mismatches.length > 0) {
      io.stderr.write(`${report.mismatches.length} of ${report.accounts} accounts have a balance that is not the sum of their ledger entries.\n`);
    }
    if (report.usageMismatches.length > 0) {
      io.stderr.write(`${report.usageMismatches.length} of ${report.accounts} accounts have a usage total that is not the sum of their usage entries.\n`);
    }
    if (report.keyMismatches.length > 0) {
      io.stderr.write(`${report.keyMismatches.length} keys have a spend or usage total that is not the sum of their usage entries.\n`);
    }
    return MISMATCHES_FOUND;
  } catch (error) {
    io.stderr.write(`error: could not reconcile balances on ${redact(databaseUrl)}: ${describe(error)}\n`);
    return COULD_NOT_CHECK;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}
