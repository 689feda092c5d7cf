import { EnvironmentError, loadEnvironment } from '@igw/platform';
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
 * `npm run reconcile`: checks every account balance against its ledger on DATABASE_URL and
 * prints the JSON report. Exit code 0 when all agree, 1 when any mismatch exists, 2 when the
 * check could not run (no DATABASE_URL, database unreachable, no billing schema).
 */
export async function runReconcile(io: CommandIo): Promise<number> {
  let databaseUrl: string | undefined;
  try {
    databaseUrl = loadEnvironment({ ...io.env, DATABASE_URL: io.env.DATABASE_URL?.trim() }).env.DATABASE_URL;
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    io.stderr.write(`error: ${error.message}\n`);
    return COULD_NOT_CHECK;
  }
  if (!databaseUrl) {
    io.stderr.write(
      'error: DATABASE_URL is not set. Point it at the PostgreSQL database billing uses, e.g.\n' +
        '  DATABASE_URL=postgres://user:password@host:5432/gateway npm run reconcile\n',
    );
    return COULD_NOT_CHECK;
  }
  const client = new Client({ connectionString: databaseUrl, application_name: 'igw-reconcile' });
  try {
    await client.connect();
    const report = await reconcileBalances(client);
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (report.mismatches.length === 0 && report.usageMismatches.length === 0) return RECONCILED;
    if (report.mismatches.length > 0) {
      io.stderr.write(`${report.mismatches.length} of ${report.accounts} accounts have a balance that is not the sum of their ledger entries.\n`);
    }
    if (report.usageMismatches.length > 0) {
      io.stderr.write(`${report.usageMismatches.length} of ${report.accounts} accounts have a usage total that is not the sum of their usage entries.\n`);
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
