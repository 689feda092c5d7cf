// The whole CLI as a function: argv and environment in, output and exit code out.
// main.ts wires it to the process; tests call it directly (cli.spec.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AdminUnreachableError, sendAdminRequest, type AdminResponse } from './admin-client';
import { parseCommand, USAGE, UsageError, type AdminRequest } from './commands';

export interface CliOutput {
  write(chunk: string): unknown;
}

export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  env: Readonly<Record<string, string | undefined>>;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Missing or unusable settings (token, URL): exit 2 like bad usage, without the usage text. */
class SetupError extends Error {}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const command = parseCommand(argv);
    if (command.kind === 'help') {
      io.stdout.write(USAGE);
      return EXIT_OK;
    }
    const baseUrl = resolveBaseUrl(command.connection.url, io.env);
    const token = await resolveToken(command.connection.token, io.env);
    return await execute(command.request, baseUrl, token, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    if (error instanceof SetupError) {
      io.stderr.write(`error: ${error.message}\n`);
      return EXIT_USAGE;
    }
    if (error instanceof AdminUnreachableError) {
      io.stderr.write(`error: ${error.message}\n`);
      return EXIT_FAILED;
    }
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}

async function execute(request: AdminRequest, baseUrl: string, token: string, io: CliIo): Promise<number> {
  const response = await sendAdminRequest({ baseUrl, token }, request);
  if (!response.ok) {
    io.stderr.write(formatError(response));
    return EXIT_FAILED;
  }
  if (response.body !== undefined) io.stdout.write(format(response.body));
  else if (response.status === 204 && request.noContentOutput) io.stdout.write(format(request.noContentOutput));
  return EXIT_OK;
}

const format = (body: unknown): string => (typeof body === 'string' ? `${body}\n` : `${JSON.stringify(body, null, 2)}\n`);

function formatError(response: AdminResponse): string {
  if (response.body === undefined) return `HTTP ${response.status} ${response.statusText}\n`.replace(/ \n$/, '\n');
  if (typeof response.body === 'string') return `HTTP ${response.status} ${response.statusText}: ${response.body}\n`;
  return format(response.body);
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

export function resolveBaseUrl(option: string | undefined, env: CliIo['env']): string {
  const raw = nonEmpty(option) ?? nonEmpty(env.BILLING_URL) ?? `http://127.0.0.1:${nonEmpty(env.BILLING_PORT) ?? '8081'}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    const source = option !== undefined ? '--url' : 'BILLING_URL / BILLING_PORT';
    throw new SetupError(`Invalid billing URL "${raw}" (from ${source}).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SetupError(`The billing URL must be http:// or https://, got "${raw}".`);
  }
  return raw.replace(/\/+$/, '');
}

export async function resolveToken(option: string | undefined, env: CliIo['env']): Promise<string> {
  const fromFlagOrEnv = nonEmpty(option) ?? nonEmpty(env.ADMIN_TOKEN);
  if (fromFlagOrEnv !== undefined) return fromFlagOrEnv;
  const file = path.join(nonEmpty(env.DATA_DIR) ?? '.data', 'admin-token');
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT';
    const problem = missing ? 'does not exist' : `cannot be read: ${error instanceof Error ? error.message : String(error)}`;
    throw new SetupError(
      `No admin token: pass --token or set ADMIN_TOKEN (${file} ${problem}; ` +
        'the standalone server, npm start, writes it when ADMIN_TOKEN is unset).',
    );
  }
  const token = content.trim();
  if (token === '') throw new SetupError(`No admin token: ${file} is empty; pass --token or set ADMIN_TOKEN.`);
  return token;
}
