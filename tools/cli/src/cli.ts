// The whole CLI as a function: argv and environment in, output and exit code out.
// main.ts wires it to the process; tests call it directly (cli.spec.ts).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AdminUnreachableError, sendAdminRequest, type AdminResponse } from './admin-client';
import { parseCommand, USAGE, usageOf, UsageError, type AdminRequest } from './commands';

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
      io.stdout.write(command.command === undefined ? USAGE : usageOf(command.command));
      return EXIT_OK;
    }
    const baseUrl = resolveBaseUrl(command.connection.url, io.env);
    const token = await resolveAdminToken(command.connection.token, io.env);
    let request = command.request;
    if (request.modelToResolve !== undefined) {
      request = await withCatalogueModel(request, request.modelToResolve, resolveGatewayUrl(command.connection.gatewayUrl, io.env), io);
    }
    if (request.secretFile !== undefined) request = await withSecretFrom(request, request.secretFile);
    return await execute(request, baseUrl, token, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\n\n${usageOf(error.command)}`);
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

async function execute(request: AdminRequest, baseUrl: string, token: AdminToken, io: CliIo): Promise<number> {
  const response = await sendAdminRequest({ baseUrl, token: token.value }, request);
  if (!response.ok) {
    io.stderr.write(formatError(response));
    if (response.status === 401) io.stderr.write(`${refusedTokenHint(token, baseUrl)}\n`);
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

/** The admin token and where it came from, so a 401 can say which one was refused. */
export interface AdminToken {
  value: string;
  /** `--token`, `ADMIN_TOKEN`, or the file path. */
  source: string;
}

export async function resolveToken(option: string | undefined, env: CliIo['env']): Promise<string> {
  return (await resolveAdminToken(option, env)).value;
}

/** --token, else ADMIN_TOKEN from the environment, else the file the standalone server writes. */
export async function resolveAdminToken(option: string | undefined, env: CliIo['env']): Promise<AdminToken> {
  const fromFlag = nonEmpty(option);
  if (fromFlag !== undefined) return { value: fromFlag, source: '--token' };
  const fromEnv = nonEmpty(env.ADMIN_TOKEN);
  if (fromEnv !== undefined) return { value: fromEnv, source: 'ADMIN_TOKEN' };
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
  return { value: token, source: file };
}

/** Names the token's source and a short fingerprint (never the token) so the operator sees which one is stale. */
function refusedTokenHint(token: AdminToken, baseUrl: string): string {
  const origin = token.source === '--token' || token.source === 'ADMIN_TOKEN' ? token.source : `the file ${token.source}`;
  const fingerprint = createHash('sha256').update(token.value).digest('hex').slice(0, 8);
  const advice =
    token.source === '--token' || token.source === 'ADMIN_TOKEN'
      ? 'Use the ADMIN_TOKEN the server was started with.'
      : 'That file holds the token the standalone server generates when ADMIN_TOKEN is unset; if the server was started with ADMIN_TOKEN, set the same ADMIN_TOKEN here (or pass --token).';
  return `error: ${baseUrl} refused the admin token from ${origin} (sha256 ${fingerprint}…). ${advice}`;
}

export function resolveGatewayUrl(option: string | undefined, env: CliIo['env']): string {
  const raw = nonEmpty(option) ?? nonEmpty(env.GATEWAY_URL) ?? `http://127.0.0.1:${nonEmpty(env.PORT) ?? '8080'}`;
  return raw.replace(/\/+$/, '');
}

/**
 * Swaps a model alias for the catalogue id the gateway resolves it to (GET /model/{name}, public).
 * A name the catalogue does not know (a retired model, say) is looked up as typed; an unreachable
 * gateway too, with a note, since usage of an exact id needs no catalogue.
 */
async function withCatalogueModel(request: AdminRequest, model: string, gatewayUrl: string, io: CliIo): Promise<AdminRequest> {
  let modelId: string | undefined;
  try {
    const response = await fetch(`${gatewayUrl}/model/${model.split('/').map(encodeURIComponent).join('/')}`, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (response.ok) {
      const body = (await response.json()) as { data?: { id?: unknown } };
      if (typeof body.data?.id === 'string') modelId = body.data.id;
    } else if (response.status !== 404) {
      io.stderr.write(`note: the gateway at ${gatewayUrl} answered ${response.status} for model "${model}"; filtering on the name as typed.\n`);
    }
  } catch {
    io.stderr.write(`note: cannot reach the gateway at ${gatewayUrl} to resolve model "${model}" (set --gateway-url or GATEWAY_URL); filtering on the name as typed.\n`);
  }
  if (modelId === undefined || modelId === model) return request;
  const [pathname, search = ''] = request.path.split('?');
  const query = new URLSearchParams(search);
  query.set('model', modelId);
  return { ...request, path: `${pathname}?${query.toString()}` };
}

/** The webhook secret from its file, without the line end an editor or `echo` adds; never printed. */
async function withSecretFrom(request: AdminRequest, file: string): Promise<AdminRequest> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    throw new SetupError(`Cannot read the webhook secret from ${file}: ${error instanceof Error && 'code' in error ? String(error.code) : String(error)}.`);
  }
  const secret = content.replace(/\r?\n$/, '');
  if (secret === '') throw new SetupError(`The webhook secret file ${file} is empty.`);
  return { ...request, body: { ...request.body, secret } };
}
