// Turns the CLI's argv into a description of one admin API request. Pure: no I/O,
// no environment, so every parse rule is unit-tested (commands.spec.ts).
import { parseArgs, type ParseArgsConfig } from 'node:util';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export type JsonBody = Record<string, string | number>;

export interface AdminRequest {
  method: HttpMethod;
  /** Path below the billing base URL, ids already URL-encoded. */
  path: string;
  /** JSON body; POST requests always carry one (possibly `{}`). */
  body?: JsonBody;
  /** Printed instead of a body when the server answers 204 No Content. */
  noContentOutput?: Record<string, string>;
}

/** Connection settings given on the command line; the environment fills the gaps (see cli.ts). */
export interface ConnectionOptions {
  url?: string;
  token?: string;
}

export type Command = { kind: 'help' } | { kind: 'request'; request: AdminRequest; connection: ConnectionOptions };

/** Bad command line: the CLI prints the message and the usage text, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage: npm run cli -- <command> [options]
       node dist/tools/cli/src/main.js <command> [options]

Admin commands for the inference gateway (they call the admin API on the billing service).

Commands:
  accounts create [--name N] [--credits C] [--plan free|paid] [--low-balance-threshold T]
  accounts get <accountId>
  keys create <accountId> [--name N]            the key is shown only in this response
  keys revoke <keyId>
  credits add <accountId> <credits> [--reason R]    credits may be negative (a correction)
  help                                          this text (also --help, -h)

Options for every command:
  --url URL      billing base URL (env BILLING_URL; default http://127.0.0.1:\${BILLING_PORT:-8081})
  --token TOKEN  admin token (env ADMIN_TOKEN; default: the file \${DATA_DIR:-.data}/admin-token
                 that the standalone server writes when ADMIN_TOKEN is unset)

Output: the JSON response on stdout. Exit codes: 0 success, 1 HTTP or connection error
(the error body goes to stderr), 2 bad usage.

Examples:
  npm run cli -- accounts create --name "Acme" --credits 1000 --plan paid
  npm run cli -- keys create <accountId> --name ci
  npm run cli -- credits add <accountId> -250 --reason "refund correction"
`;

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  credits: { type: 'string' },
  plan: { type: 'string' },
  'low-balance-threshold': { type: 'string' },
  reason: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type OptionName = keyof typeof OPTIONS;
type ParsedValues = Partial<Record<OptionName, string | boolean>>;

const GLOBAL_OPTIONS: readonly OptionName[] = ['url', 'token', 'help'];

const DECIMAL = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const NEGATIVE_NUMBER = /^-(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * parseArgs (strict) takes any argument starting with "-" for an option, so
 * `credits add <id> -5` would fail with "Unknown option '-5'" and `--reason -5` as an
 * ambiguous value. Before parsing, every negative number outside the `--` section is
 * prefixed with a NUL character (argv strings can never contain NUL, so the marker is
 * unambiguous); parseArgs then sees an ordinary positional or option value, and the
 * marker is removed afterwards.
 */
const MARK = '\u0000';
const protect = (argv: readonly string[]): string[] => {
  const terminator = argv.indexOf('--');
  return argv.map((arg, index) => ((terminator === -1 || index < terminator) && NEGATIVE_NUMBER.test(arg) ? MARK + arg : arg));
};
const unprotect = (value: string): string => (value.startsWith(MARK) ? value.slice(MARK.length) : value);

export function parseCommand(argv: readonly string[]): Command {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: protect(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values: ParsedValues = {};
  for (const name of Object.keys(OPTIONS) as OptionName[]) {
    const value = parsed.values[name];
    if (value !== undefined) values[name] = typeof value === 'string' ? unprotect(value) : value;
  }
  const positionals = parsed.positionals.map(unprotect);

  if (values.help === true || positionals[0] === 'help') return { kind: 'help' };
  const [group, action, ...args] = positionals;
  if (group === undefined) throw new UsageError('Missing command.');
  const connection: ConnectionOptions = {};
  if (typeof values.url === 'string') connection.url = values.url;
  if (typeof values.token === 'string') connection.token = values.token;

  const command = `${group} ${action ?? ''}`.trim();
  const request = buildRequest(command, args, values);
  return { kind: 'request', request, connection };
}

function buildRequest(command: string, args: string[], values: ParsedValues): AdminRequest {
  switch (command) {
    case 'accounts create': {
      expectArguments(command, args, []);
      expectOptions(command, values, ['name', 'credits', 'plan', 'low-balance-threshold']);
      const body: JsonBody = {};
      const name = stringOption(values, 'name');
      if (name !== undefined) body.name = name;
      const credits = stringOption(values, 'credits');
      if (credits !== undefined) body.credits = toNumber('--credits', credits);
      const plan = stringOption(values, 'plan');
      if (plan !== undefined) {
        if (plan !== 'free' && plan !== 'paid') throw new UsageError(`--plan must be "free" or "paid", got "${plan}".`);
        body.plan = plan;
      }
      const threshold = stringOption(values, 'low-balance-threshold');
      if (threshold !== undefined) body.lowBalanceThreshold = toNumber('--low-balance-threshold', threshold);
      return { method: 'POST', path: '/admin/v1/accounts', body };
    }
    case 'accounts get': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, []);
      return { method: 'GET', path: `/admin/v1/accounts/${segment(accountId)}` };
    }
    case 'keys create': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, ['name']);
      const body: JsonBody = {};
      const name = stringOption(values, 'name');
      if (name !== undefined) body.name = name;
      return { method: 'POST', path: `/admin/v1/accounts/${segment(accountId)}/keys`, body };
    }
    case 'keys revoke': {
      const [keyId] = expectArguments(command, args, ['keyId']);
      expectOptions(command, values, []);
      return { method: 'DELETE', path: `/admin/v1/keys/${segment(keyId)}`, noContentOutput: { revoked: keyId } };
    }
    case 'credits add': {
      const [accountId, credits] = expectArguments(command, args, ['accountId', 'credits']);
      expectOptions(command, values, ['reason']);
      const body: JsonBody = { credits: toNumber('<credits>', credits) };
      const reason = stringOption(values, 'reason');
      if (reason !== undefined) body.reason = reason;
      return { method: 'POST', path: `/admin/v1/accounts/${segment(accountId)}/credits`, body };
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

function expectArguments(command: string, args: string[], names: string[]): string[] {
  if (args.length < names.length) {
    throw new UsageError(`"${command}" needs ${names.map((name) => `<${name}>`).join(' ')}.`);
  }
  if (args.length > names.length) throw new UsageError(`Unexpected argument "${args[names.length]}" for "${command}".`);
  for (const [index, arg] of args.entries()) {
    if (arg.trim() === '') throw new UsageError(`<${names[index]}> must not be empty.`);
  }
  return args;
}

function expectOptions(command: string, values: ParsedValues, allowed: OptionName[]): void {
  for (const name of Object.keys(values) as OptionName[]) {
    if (!GLOBAL_OPTIONS.includes(name) && !allowed.includes(name)) {
      throw new UsageError(`--${name} is not an option of "${command}".`);
    }
  }
}

function stringOption(values: ParsedValues, name: OptionName): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Decimal numbers only ("1000", "-5", "0.25", "1e6"): "0x10", "", "Infinity" are usage errors. */
function toNumber(label: string, raw: string): number {
  const text = raw.trim();
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(value)) throw new UsageError(`${label} must be a number, got "${raw}".`);
  return value;
}

const segment = (id: string): string => encodeURIComponent(id);
