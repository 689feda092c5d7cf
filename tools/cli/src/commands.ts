// Turns the CLI's argv into a description of one admin API request. Pure: no I/O,
// no environment, so every parse rule is unit-tested (commands.spec.ts).
import { parseArgs, type ParseArgsConfig } from 'node:util';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A null clears a setting (`accounts update --rpm none`). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [name: string]: JsonValue };
export type JsonBody = Record<string, JsonValue>;

export interface AdminRequest {
  method: HttpMethod;
  /** Path below the billing base URL, ids already URL-encoded, with any query string. */
  path: string;
  /** JSON body; POST, PUT and PATCH requests always carry one (possibly `{}`). */
  body?: JsonBody;
  /** Printed instead of a body when the server answers 204 No Content. */
  noContentOutput?: Record<string, string>;
  /**
   * `usage list --model`: the name as typed, maybe an alias. Billing records catalogue ids and
   * does not hold the catalogue, so cli.ts asks the gateway which id it names and swaps it in.
   */
  modelToResolve?: string;
  /**
   * `webhook set --secret-file`: the file holding the webhook's secret, which cli.ts reads into
   * the body's `secret` (a secret on the command line would show in `ps` and the shell's history).
   */
  secretFile?: string;
}

/** Connection settings given on the command line; the environment fills the gaps (see cli.ts). */
export interface ConnectionOptions {
  url?: string;
  token?: string;
  gatewayUrl?: string;
}

/** `command`: help for one command (`keys create --help`) or a group (`help keys`); none: for all. */
export type Command = { kind: 'help'; command?: string } | { kind: 'request'; request: AdminRequest; connection: ConnectionOptions };

/** Bad command line: the CLI prints the message and the help of `command` (the one the user meant, when known), and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  command?: string;
}

/** Each command's synopsis and notes, as `help` lists them and as a usage mistake shows its own. */
const COMMAND_HELP: Record<string, string> = {
  'accounts create': `  accounts create [--name N] [--usd U | --credits C] [--plan free|paid] [--low-balance-threshold T]
                  [--cache-enabled true|false] [--cache-ttl N] [--cache-max-ttl N] [--cache-scope account|key]
                                                opening balance in USD or in credits (default 0)
                                                --plan: default paid when the account opens with credits,
                                                free when it opens empty (the free plan allows
                                                FREE_TIER_HOURLY_LIMIT requests an hour, default 100);
                                                the cache options: the response cache for the account's
                                                keys (off without them), as accounts update takes them`,
  'accounts get': `  accounts get <accountId>`,
  'accounts update': `  accounts update <accountId> [--name N] [--plan free|paid] [--status active|suspended]
                  [--auto-debit enabled|disabled] [--low-balance-threshold T]
                  [--rpm N|none] [--concurrency N|none]
                                                "none" removes a limit override (default applies)
                  [--cache-enabled true|false] [--cache-ttl N] [--cache-max-ttl N]
                  [--cache-scope account|key] [--cache none]
                                                the response cache for the account's keys: the cache
                                                options given replace the whole setting; --cache none
                                                removes it (off); N in seconds, at most 2592000 (30 days)`,
  'keys create': `  keys create <accountId> [--name N] [key rules]  the key is shown only in this response`,
  'keys update': `  keys update <keyId> [--name N] [key rules]    only the rules given change; "none" removes one
                key rules: [--budget L|none] [--budget-unit usd|credits] [--budget-period day|month|lifetime]
                           [--models M1,M2|none] [--rpm N|none] [--concurrency N|none]
                           [--expires-at T|none] [--metadata k=v,k2=v2|none]
                           [--cache-enabled true|false] [--cache-ttl N] [--cache-max-ttl N]
                           [--cache-scope account|key] [--cache none]
                --budget: an exact decimal, in USD per month unless --budget-unit/--budget-period say
                otherwise (periods reset at UTC midnight / the 1st); --models: ids, aliases or
                patterns such as anthropic/*; rpm and concurrency apply within the account's;
                the cache options: the key's response cache over its account's (a field left out is
                the account's), replacing the key's whole setting; --cache none removes it`,
  'keys get': `  keys get <keyId>                              its rules and its spend in the current period`,
  'keys list': `  keys list <accountId>                         id, name, prefix, rules, spend, dates (never the key)`,
  'keys revoke': `  keys revoke <keyId>`,
  'credits add': `  credits add <accountId> <credits> [--reason R]    credits may be negative (a correction)
  credits add <accountId> --credits C [--reason R]  the same
  credits add <accountId> --usd U [--reason R]      in USD (at CREDITS_PER_USD, default 2,000,000)`,
  'webhook set': `  webhook set <accountId> --webhook-url U [--secret-file F]
              [--balance-threshold C | --balance-threshold-usd U | --balance-threshold none]
                                                alerts POSTed to U, signed with the secret in file F
                                                (required the first time; left out, the current one stays);
                                                balance.below_threshold when the balance falls under C credits`,
  'webhook get': `  webhook get <accountId>                       the webhook, never its secret`,
  'webhook delete': `  webhook delete <accountId>`,
  'webhook events': `  webhook events <accountId> [--limit N]         newest alerts and how their delivery went`,
  'usage list': `  usage list <accountId> [--from T] [--to T] [--model M] [--key K] [--kind usage|credit]
             [--limit N] [--cursor C]           newest first; --cursor takes a nextCursor;
                                                --model takes a model id or alias (the gateway resolves it)`,
  'usage summary': `  usage summary <accountId> [--from T] [--to T]     usage summed by UTC day and model
             [--group-by model,key] [--granularity day|hour] [--model M] [--key K]
                                                T: ISO 8601, e.g. 2025-01-31 or 2025-01-31T12:00:00Z
                                                (from inclusive, to exclusive; UTC unless an offset);
                                                --group-by: model, key, both, or "" for periods only`,
  'cache clear': `  cache clear --account <accountId> [--model M] [--key <keyId>]
                                                removes the account's response cache entries (of one
                                                model and/or one key); prints how many the gateways removed`,
};

const INVOCATION = `Usage: npx igw <command> [options]
       npm run -s cli -- <command> [options]      (-s: without npm's banner on stdout)`;

const COMMON_OPTIONS = `Options for every command:
  --url URL      billing base URL (env BILLING_URL; default http://127.0.0.1:\${BILLING_PORT:-8081})
  --token TOKEN  admin token (env ADMIN_TOKEN; default: the file \${DATA_DIR:-.data}/admin-token
                 that the standalone server writes when ADMIN_TOKEN is unset)
  --gateway-url URL  gateway base URL, to resolve --model aliases (env GATEWAY_URL;
                 default http://127.0.0.1:\${PORT:-8080})`;

export const USAGE = `${INVOCATION}

Admin commands for the inference gateway (they call the admin API on the billing service).

Commands:
${Object.values(COMMAND_HELP).join('\n')}
  help [command]                                this text, or one command's (also --help, -h)

${COMMON_OPTIONS}

Output: the JSON response on stdout. Exit codes: 0 success, 1 HTTP or connection error
(the error body goes to stderr), 2 bad usage.

Amounts: usage list and usage summary show credits and USD as exact decimal strings ("913.5",
"0.00000027"), a charge positive in both. 2,000,000 credits are 1 USD (CREDITS_PER_USD); an
account is reported low-balance under 100,000 credits ($0.05) unless --low-balance-threshold
says otherwise.

Examples:
  npx igw accounts create --name "Acme" --usd 10
  npx igw keys create <accountId> --name ci
  npx igw keys create <accountId> --name ci --budget 25.00 --budget-period month --models "anthropic/*,gpt-4.1-mini"
  npx igw keys update <keyId> --budget 50 --rpm none --expires-at 2027-01-01T00:00:00Z
  npx igw keys list <accountId>
  npx igw credits add <accountId> --usd 25 --reason "monthly top-up"
  npx igw credits add <accountId> --credits -250000 --reason "refund correction"
  npx igw accounts update <accountId> --status suspended --rpm 120 --concurrency none
  npx igw usage list <accountId> --from 2025-01-01 --to 2025-02-01 --model gpt-4o-mini
  npx igw usage summary <accountId> --from 2025-01-01 | jq .totals
  npx igw accounts update <accountId> --cache-enabled true --cache-ttl 600 --cache-scope key
  npx igw cache clear --account <accountId> --model gpt-4o-mini
  npx igw webhook set <accountId> --webhook-url https://hooks.example.com/gw --secret-file ./whsec --balance-threshold-usd 5
`;

/**
 * The help of the commands `command` names (one, or a group such as "keys"), short enough to
 * read under an error; for no known command, the list of commands.
 */
export function usageOf(command: string | undefined): string {
  const names = Object.keys(COMMAND_HELP);
  const matching = command === undefined ? [] : names.filter((name) => name === command || name.startsWith(`${command} `));
  if (matching.length === 0) return `${INVOCATION}\n\nCommands: ${names.join(', ')}.\nRun "npx igw help" for every command and option.\n`;
  return `${INVOCATION}\n\n${matching.map((name) => COMMAND_HELP[name]).join('\n')}\n\nRun "npx igw help" for the options every command takes.\n`;
}

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'gateway-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  credits: { type: 'string' },
  usd: { type: 'string' },
  plan: { type: 'string' },
  'low-balance-threshold': { type: 'string' },
  reason: { type: 'string' },
  status: { type: 'string' },
  'auto-debit': { type: 'string' },
  rpm: { type: 'string' },
  concurrency: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  model: { type: 'string' },
  key: { type: 'string' },
  kind: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  'webhook-url': { type: 'string' },
  'secret-file': { type: 'string' },
  'balance-threshold': { type: 'string' },
  'balance-threshold-usd': { type: 'string' },
  'group-by': { type: 'string' },
  granularity: { type: 'string' },
  budget: { type: 'string' },
  'budget-unit': { type: 'string' },
  'budget-period': { type: 'string' },
  models: { type: 'string' },
  'expires-at': { type: 'string' },
  metadata: { type: 'string' },
  cache: { type: 'string' },
  'cache-enabled': { type: 'string' },
  'cache-ttl': { type: 'string' },
  'cache-max-ttl': { type: 'string' },
  'cache-scope': { type: 'string' },
  account: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type OptionName = keyof typeof OPTIONS;
type ParsedValues = Partial<Record<OptionName, string | boolean>>;

const GLOBAL_OPTIONS: readonly OptionName[] = ['url', 'token', 'gateway-url', 'help'];

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
  try {
    return parseKnownCommand(argv);
  } catch (error) {
    if (error instanceof UsageError) error.command ??= intendedCommand(argv);
    throw error;
  }
}

/** The command a command line that does not parse was meant to run, when its first words name one. */
function intendedCommand(argv: readonly string[]): string | undefined {
  const { positionals } = parseArgs({ args: protect(argv), options: OPTIONS, allowPositionals: true, strict: false });
  const [group, action] = positionals;
  if (group === undefined) return undefined;
  const command = `${group} ${action ?? ''}`.trim();
  if (command in COMMAND_HELP) return command;
  return Object.keys(COMMAND_HELP).some((name) => name.startsWith(`${group} `)) ? group : undefined;
}

function parseKnownCommand(argv: readonly string[]): Command {
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

  if (positionals[0] === 'help') return helpFor(positionals.slice(1));
  if (values.help === true) return helpFor(positionals);
  const [group, action, ...args] = positionals;
  if (group === undefined) throw new UsageError('Missing command.');
  const connection: ConnectionOptions = {};
  if (typeof values.url === 'string') connection.url = values.url;
  if (typeof values.token === 'string') connection.token = values.token;
  if (typeof values['gateway-url'] === 'string') connection.gatewayUrl = values['gateway-url'];

  const command = `${group} ${action ?? ''}`.trim();
  const request = buildRequest(command, args, values);
  return { kind: 'request', request, connection };
}

function helpFor(words: readonly string[]): Command {
  const command = words.slice(0, 2).join(' ');
  return command === '' ? { kind: 'help' } : { kind: 'help', command };
}

function buildRequest(command: string, args: string[], values: ParsedValues): AdminRequest {
  switch (command) {
    case 'accounts create': {
      expectArguments(command, args, []);
      expectOptions(command, values, ['name', 'credits', 'usd', 'plan', 'low-balance-threshold', ...CACHE_OPTIONS]);
      const body: JsonBody = {};
      const name = stringOption(values, 'name');
      if (name !== undefined) body.name = name;
      const credits = stringOption(values, 'credits');
      const usd = stringOption(values, 'usd');
      if (credits !== undefined && usd !== undefined) throw new UsageError('Give the opening balance as --usd or as --credits, not both.');
      if (credits !== undefined) body.credits = toNumber('--credits', credits);
      if (usd !== undefined) body.usd = toNumber('--usd', usd);
      const plan = choiceOption(values, 'plan', ['free', 'paid']);
      if (plan !== undefined) body.plan = plan;
      const threshold = stringOption(values, 'low-balance-threshold');
      if (threshold !== undefined) body.lowBalanceThreshold = toNumber('--low-balance-threshold', threshold);
      const cache = cacheSetting(values);
      if (cache !== undefined) body.cache = cache;
      return { method: 'POST', path: '/admin/v1/accounts', body };
    }
    case 'accounts update': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      const settings: OptionName[] = ['name', 'plan', 'status', 'auto-debit', 'low-balance-threshold', 'rpm', 'concurrency', ...CACHE_OPTIONS];
      expectOptions(command, values, settings);
      if (!settings.some((name) => values[name] !== undefined)) {
        throw new UsageError(`"${command}" needs at least one of ${settings.map((name) => `--${name}`).join(', ')}.`);
      }
      const body: JsonBody = {};
      const name = stringOption(values, 'name');
      if (name !== undefined) body.name = name;
      const plan = choiceOption(values, 'plan', ['free', 'paid']);
      if (plan !== undefined) body.plan = plan;
      const status = choiceOption(values, 'status', ['active', 'suspended']);
      if (status !== undefined) body.status = status;
      const autoDebit = choiceOption(values, 'auto-debit', ['enabled', 'disabled']);
      if (autoDebit !== undefined) body.autoDebitStatus = autoDebit;
      const threshold = stringOption(values, 'low-balance-threshold');
      if (threshold !== undefined) body.lowBalanceThreshold = toNumber('--low-balance-threshold', threshold);
      const rpm = stringOption(values, 'rpm');
      if (rpm !== undefined) body.requestsPerMinute = toLimit('--rpm', rpm);
      const concurrency = stringOption(values, 'concurrency');
      if (concurrency !== undefined) body.concurrentRequests = toLimit('--concurrency', concurrency);
      const cache = cacheSetting(values);
      if (cache !== undefined) body.cache = cache;
      return { method: 'PATCH', path: `/admin/v1/accounts/${segment(accountId)}`, body };
    }
    case 'usage list': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, ['from', 'to', 'model', 'key', 'kind', 'limit', 'cursor']);
      const query = new URLSearchParams();
      for (const name of ['from', 'to', 'model', 'key'] as const) {
        const value = stringOption(values, name);
        if (value !== undefined) query.set(name, value);
      }
      const model = stringOption(values, 'model');
      const kind = choiceOption(values, 'kind', ['usage', 'credit']);
      if (kind !== undefined) query.set('kind', kind);
      const limit = stringOption(values, 'limit');
      if (limit !== undefined) query.set('limit', String(toPositiveInteger('--limit', limit)));
      const cursor = stringOption(values, 'cursor');
      if (cursor !== undefined) query.set('cursor', cursor);
      const request: AdminRequest = { method: 'GET', path: withQuery(`/admin/v1/accounts/${segment(accountId)}/usage`, query) };
      if (model !== undefined && model.trim() !== '') request.modelToResolve = model.trim();
      return request;
    }
    case 'usage summary': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, ['from', 'to', 'model', 'key', 'group-by', 'granularity']);
      const query = new URLSearchParams();
      for (const name of ['from', 'to', 'model', 'key'] as const) {
        const value = stringOption(values, name);
        if (value !== undefined) query.set(name, value);
      }
      const groupBy = stringOption(values, 'group-by');
      if (groupBy !== undefined) query.set('groupBy', groupBy);
      const granularity = choiceOption(values, 'granularity', ['day', 'hour']);
      if (granularity !== undefined) query.set('granularity', granularity);
      const model = stringOption(values, 'model');
      const request: AdminRequest = { method: 'GET', path: withQuery(`/admin/v1/accounts/${segment(accountId)}/usage/summary`, query) };
      if (model !== undefined && model.trim() !== '') request.modelToResolve = model.trim();
      return request;
    }
    case 'accounts get': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, []);
      return { method: 'GET', path: `/admin/v1/accounts/${segment(accountId)}` };
    }
    case 'keys create': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, KEY_RULE_OPTIONS);
      return { method: 'POST', path: `/admin/v1/accounts/${segment(accountId)}/keys`, body: keyRulesBody(values) };
    }
    case 'keys update': {
      const [keyId] = expectArguments(command, args, ['keyId']);
      expectOptions(command, values, KEY_RULE_OPTIONS);
      const body = keyRulesBody(values);
      if (Object.keys(body).length === 0) throw new UsageError(`"${command}" needs at least one of ${KEY_RULE_OPTIONS.filter((name) => !name.startsWith('budget-')).map((name) => `--${name}`).join(', ')}.`);
      return { method: 'PATCH', path: `/admin/v1/keys/${segment(keyId)}`, body };
    }
    case 'keys get': {
      const [keyId] = expectArguments(command, args, ['keyId']);
      expectOptions(command, values, []);
      return { method: 'GET', path: `/admin/v1/keys/${segment(keyId)}` };
    }
    case 'keys list': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, []);
      return { method: 'GET', path: `/admin/v1/accounts/${segment(accountId)}/keys` };
    }
    case 'keys revoke': {
      const [keyId] = expectArguments(command, args, ['keyId']);
      expectOptions(command, values, []);
      return { method: 'DELETE', path: `/admin/v1/keys/${segment(keyId)}`, noContentOutput: { revoked: keyId } };
    }
    case 'webhook set': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, ['webhook-url', 'secret-file', 'balance-threshold', 'balance-threshold-usd']);
      // Not --url: that one names billing, in every command.
      const url = stringOption(values, 'webhook-url');
      if (url === undefined) throw new UsageError('"webhook set" needs --webhook-url (where the alerts are POSTed).');
      const body: JsonBody = { url };
      const threshold = stringOption(values, 'balance-threshold');
      const thresholdUsd = stringOption(values, 'balance-threshold-usd');
      if (threshold !== undefined && thresholdUsd !== undefined) throw new UsageError('Give the threshold as --balance-threshold or as --balance-threshold-usd, not both.');
      if (threshold !== undefined) body.balanceThreshold = threshold.trim().toLowerCase() === 'none' ? null : toNumber('--balance-threshold', threshold);
      if (thresholdUsd !== undefined) body.balanceThresholdUsd = toNumber('--balance-threshold-usd', thresholdUsd);
      const request: AdminRequest = { method: 'PUT', path: `/admin/v1/accounts/${segment(accountId)}/webhook`, body };
      const secretFile = stringOption(values, 'secret-file');
      if (secretFile !== undefined) request.secretFile = secretFile;
      return request;
    }
    case 'webhook get': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, []);
      return { method: 'GET', path: `/admin/v1/accounts/${segment(accountId)}/webhook` };
    }
    case 'webhook delete': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, []);
      return { method: 'DELETE', path: `/admin/v1/accounts/${segment(accountId)}/webhook`, noContentOutput: { webhookRemoved: accountId } };
    }
    case 'webhook events': {
      const [accountId] = expectArguments(command, args, ['accountId']);
      expectOptions(command, values, ['limit']);
      const query = new URLSearchParams();
      const limit = stringOption(values, 'limit');
      if (limit !== undefined) query.set('limit', String(toPositiveInteger('--limit', limit)));
      return { method: 'GET', path: withQuery(`/admin/v1/accounts/${segment(accountId)}/webhook/events`, query) };
    }
    case 'cache clear': {
      expectArguments(command, args, []);
      expectOptions(command, values, ['account', 'model', 'key']);
      const account = stringOption(values, 'account');
      if (account === undefined || account.trim() === '') throw new UsageError('"cache clear" needs --account <accountId>.');
      const query = new URLSearchParams({ account: account.trim() });
      const model = stringOption(values, 'model')?.trim();
      if (model !== undefined && model !== '') query.set('model', model);
      const key = stringOption(values, 'key')?.trim();
      if (key !== undefined && key !== '') query.set('key', key);
      const request: AdminRequest = { method: 'DELETE', path: withQuery('/admin/v1/cache', query) };
      if (model !== undefined && model !== '') request.modelToResolve = model;
      return request;
    }
    case 'credits add': {
      expectOptions(command, values, ['reason', 'usd', 'credits']);
      const usd = stringOption(values, 'usd');
      const creditsOption = stringOption(values, 'credits');
      const given = [args.length >= 2 ? '<credits>' : undefined, creditsOption !== undefined ? '--credits' : undefined, usd !== undefined ? '--usd' : undefined].filter(Boolean);
      if (given.length > 1) throw new UsageError(`Give the amount once, as <credits>, --credits or --usd, not both (${given.join(' and ')}).`);
      if (given.length === 0) throw new UsageError('"credits add" needs <accountId> <credits> (or the amount as --credits C or --usd U).');
      const [accountId, credits] = expectArguments(command, args, given[0] === '<credits>' ? ['accountId', 'credits'] : ['accountId']);
      const body: JsonBody =
        usd !== undefined ? { usd: toNumber('--usd', usd) } : creditsOption !== undefined ? { credits: toNumber('--credits', creditsOption) } : { credits: toNumber('<credits>', credits) };
      const reason = stringOption(values, 'reason');
      if (reason !== undefined) body.reason = reason;
      return { method: 'POST', path: `/admin/v1/accounts/${segment(accountId)}/credits`, body };
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

const CACHE_OPTIONS: OptionName[] = ['cache-enabled', 'cache-ttl', 'cache-max-ttl', 'cache-scope', 'cache'];
const KEY_RULE_OPTIONS: OptionName[] = ['name', 'budget', 'budget-unit', 'budget-period', 'models', 'rpm', 'concurrency', 'expires-at', 'metadata', ...CACHE_OPTIONS];

const isNone = (raw: string): boolean => raw.trim().toLowerCase() === 'none';

/** The key rules the options give, as the admin API takes them (KeyRulesDto); billing checks the values. */
function keyRulesBody(values: ParsedValues): JsonBody {
  const body: JsonBody = {};
  const name = stringOption(values, 'name');
  if (name !== undefined) body.name = name;
  const budget = stringOption(values, 'budget');
  const unit = choiceOption(values, 'budget-unit', ['usd', 'credits']);
  const period = choiceOption(values, 'budget-period', ['day', 'month', 'lifetime']);
  if (budget === undefined && (unit !== undefined || period !== undefined)) throw new UsageError('--budget-unit and --budget-period go with --budget L.');
  if (budget !== undefined) {
    if (isNone(budget)) {
      if (unit !== undefined || period !== undefined) throw new UsageError('--budget none takes no --budget-unit or --budget-period.');
      body.budget = null;
    } else {
      if (!/^\d+(\.\d+)?$/.test(budget.trim())) throw new UsageError(`--budget must be an amount such as 25.00, or "none", got "${budget}".`);
      body.budget = { limit: budget.trim(), unit: unit ?? 'usd', period: period ?? 'month' };
    }
  }
  const models = stringOption(values, 'models');
  if (models !== undefined) {
    body.models = isNone(models) ? null : models.split(',').map((model) => model.trim()).filter((model) => model !== '');
  }
  const rpm = stringOption(values, 'rpm');
  if (rpm !== undefined) body.rpm = toLimit('--rpm', rpm);
  const concurrency = stringOption(values, 'concurrency');
  if (concurrency !== undefined) body.concurrency = toLimit('--concurrency', concurrency);
  const expiresAt = stringOption(values, 'expires-at');
  if (expiresAt !== undefined) body.expiresAt = isNone(expiresAt) ? null : expiresAt.trim();
  const metadata = stringOption(values, 'metadata');
  if (metadata !== undefined) body.metadata = isNone(metadata) ? {} : metadataOf(metadata);
  const cache = cacheSetting(values);
  if (cache !== undefined) body.cache = cache;
  return body;
}

/**
 * The response cache setting the options give (ResponseCacheSettingsDto): the fields given,
 * `--cache none` for null (removed), nothing without a cache option. Billing checks the ranges.
 */
function cacheSetting(values: ParsedValues): JsonValue | undefined {
  const fields = CACHE_OPTIONS.filter((name) => name !== 'cache' && values[name] !== undefined);
  const cache = stringOption(values, 'cache');
  if (cache !== undefined) {
    if (!isNone(cache)) throw new UsageError(`--cache takes only "none" (it removes the cache setting), got "${cache}"; set it with --cache-enabled, --cache-ttl, --cache-max-ttl and --cache-scope.`);
    if (fields.length > 0) throw new UsageError(`--cache none takes no ${fields.map((name) => `--${name}`).join(', ')}.`);
    return null;
  }
  if (fields.length === 0) return undefined;
  const setting: { [name: string]: JsonValue } = {};
  const enabled = choiceOption(values, 'cache-enabled', ['true', 'false']);
  if (enabled !== undefined) setting.enabled = enabled === 'true';
  const ttl = stringOption(values, 'cache-ttl');
  if (ttl !== undefined) setting.ttlSeconds = toPositiveInteger('--cache-ttl', ttl);
  const maxTtl = stringOption(values, 'cache-max-ttl');
  if (maxTtl !== undefined) setting.maxTtlSeconds = toPositiveInteger('--cache-max-ttl', maxTtl);
  const scope = choiceOption(values, 'cache-scope', ['account', 'key']);
  if (scope !== undefined) setting.scope = scope;
  return setting;
}

/** `owner=ana,team=search` as an object; a pair without `=` is a usage error. */
function metadataOf(raw: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--metadata takes name=value pairs separated by commas, or "none", got "${pair}".`);
    pairs[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return pairs;
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

function choiceOption<T extends string>(values: ParsedValues, name: OptionName, choices: readonly T[]): T | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be ${choices.map((choice) => `"${choice}"`).join(' or ')}, got "${value}".`);
  }
  return value as T;
}

/** A whole number of at least 1 ("60"); "1.5", "0", "-3", "1e3" are usage errors. */
function toPositiveInteger(label: string, raw: string): number {
  const text = raw.trim();
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`${label} must be a whole number of at least 1, got "${raw}".`);
  }
  return value;
}

/** A limit override: a whole number of at least 1, or "none" to remove the override (JSON null). */
function toLimit(label: string, raw: string): number | null {
  if (raw.trim().toLowerCase() === 'none') return null;
  try {
    return toPositiveInteger(label, raw);
  } catch {
    throw new UsageError(`${label} must be a whole number of at least 1 or "none", got "${raw}".`);
  }
}

const withQuery = (path: string, query: URLSearchParams): string => (query.size > 0 ? `${path}?${query.toString()}` : path);

/** Decimal numbers only ("1000", "-5", "0.25", "1e6"): "0x10", "", "Infinity" are usage errors. */
function toNumber(label: string, raw: string): number {
  const text = raw.trim();
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(value)) throw new UsageError(`${label} must be a number, got "${raw}".`);
  return value;
}

const segment = (id: string): string => encodeURIComponent(id);
