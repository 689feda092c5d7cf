import { parseCommand, UsageError, type AdminRequest, type Command } from './commands';

const ACCOUNT = '0b7f3c1e-5d2a-4c8e-9f10-2a3b4c5d6e7f';
const KEY = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

function requestOf(argv: string[]): AdminRequest {
  const command = parseCommand(argv);
  if (command.kind !== 'request') throw new Error(`expected a request, got ${command.kind}`);
  return command.request;
}

function usageErrorOf(argv: string[]): string {
  try {
    parseCommand(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`expected a usage error for ${JSON.stringify(argv)}`);
}

describe('parseCommand', () => {
  describe('accounts create', () => {
    it('sends an empty body without options', () => {
      expect(requestOf(['accounts', 'create'])).toEqual({ method: 'POST', path: '/admin/v1/accounts', body: {} });
    });

    it('maps every option, with numbers as JSON numbers', () => {
      const argv = ['accounts', 'create', '--name', 'Acme research', '--credits', '1000', '--plan', 'paid'];
      argv.push('--low-balance-threshold', '12.5');
      const request = requestOf(argv);
      expect(request).toEqual({
        method: 'POST',
        path: '/admin/v1/accounts',
        body: { name: 'Acme research', credits: 1000, plan: 'paid', lowBalanceThreshold: 12.5 },
      });
      expect(JSON.stringify(request.body)).toBe('{"name":"Acme research","credits":1000,"plan":"paid","lowBalanceThreshold":12.5}');
    });

    it('accepts --option=value and options before the command', () => {
      expect(requestOf(['--credits=0.25', 'accounts', 'create', '--plan=free']).body).toEqual({ credits: 0.25, plan: 'free' });
    });

    it('passes a negative --credits value through as a number (the server rejects it, not the parser)', () => {
      expect(requestOf(['accounts', 'create', '--credits', '-5']).body).toEqual({ credits: -5 });
      expect(requestOf(['accounts', 'create', '--credits=-5']).body).toEqual({ credits: -5 });
    });

    it('rejects a plan other than free or paid', () => {
      expect(usageErrorOf(['accounts', 'create', '--plan', 'gold'])).toContain('--plan must be "free" or "paid"');
    });

    it.each(['abc', '', '0x10', 'Infinity', '1,000', '12abc'])('rejects --credits %j', (value) => {
      expect(usageErrorOf(['accounts', 'create', '--credits', value])).toContain('--credits must be a number');
    });

    it('rejects positional arguments and options of other commands', () => {
      expect(usageErrorOf(['accounts', 'create', 'extra'])).toContain('Unexpected argument "extra"');
      expect(usageErrorOf(['accounts', 'create', '--reason', 'x'])).toContain('--reason is not an option of "accounts create"');
    });
  });

  describe('accounts get', () => {
    it('gets one account, URL-encoding the id', () => {
      expect(requestOf(['accounts', 'get', ACCOUNT])).toEqual({ method: 'GET', path: `/admin/v1/accounts/${ACCOUNT}` });
      expect(requestOf(['accounts', 'get', 'a/b?c']).path).toBe('/admin/v1/accounts/a%2Fb%3Fc');
    });

    it('needs exactly one id', () => {
      expect(usageErrorOf(['accounts', 'get'])).toContain('"accounts get" needs <accountId>');
      expect(usageErrorOf(['accounts', 'get', ACCOUNT, 'more'])).toContain('Unexpected argument "more"');
      expect(usageErrorOf(['accounts', 'get', ' '])).toContain('<accountId> must not be empty');
    });
  });

  describe('keys', () => {
    it('creates a key with or without a name', () => {
      expect(requestOf(['keys', 'create', ACCOUNT])).toEqual({ method: 'POST', path: `/admin/v1/accounts/${ACCOUNT}/keys`, body: {} });
      expect(requestOf(['keys', 'create', ACCOUNT, '--name', 'ci pipeline']).body).toEqual({ name: 'ci pipeline' });
    });

    it('creates a key with its rules, in the admin API\'s shape', () => {
      const argv = ['keys', 'create', ACCOUNT, '--name', 'ci', '--budget', '25.00', '--budget-period', 'day', '--models', 'anthropic/*, gpt-4.1-mini'];
      argv.push('--rpm', '60', '--concurrency', '4', '--expires-at', '2027-01-31T00:00:00Z', '--metadata', 'owner=ana@example.com,team=search');
      expect(requestOf(argv).body).toEqual({
        name: 'ci',
        budget: { limit: '25.00', unit: 'usd', period: 'day' },
        models: ['anthropic/*', 'gpt-4.1-mini'],
        rpm: 60,
        concurrency: 4,
        expiresAt: '2027-01-31T00:00:00Z',
        metadata: { owner: 'ana@example.com', team: 'search' },
      });
      expect(requestOf(['keys', 'create', ACCOUNT, '--budget', '500', '--budget-unit', 'credits', '--budget-period', 'lifetime']).body).toEqual({
        budget: { limit: '500', unit: 'credits', period: 'lifetime' },
      });
    });

    it('changes only the rules given, "none" clearing one', () => {
      expect(requestOf(['keys', 'update', KEY, '--budget', 'none', '--models', 'none', '--rpm', 'none', '--expires-at', 'none', '--metadata', 'none'])).toEqual({
        method: 'PATCH',
        path: `/admin/v1/keys/${KEY}`,
        body: { budget: null, models: null, rpm: null, expiresAt: null, metadata: {} },
      });
      expect(requestOf(['keys', 'get', KEY])).toEqual({ method: 'GET', path: `/admin/v1/keys/${KEY}` });
      expect(usageErrorOf(['keys', 'update', KEY])).toContain('"keys update" needs at least one of');
      expect(usageErrorOf(['keys', 'update', KEY, '--budget', '25 dollars'])).toContain('--budget must be an amount');
      expect(usageErrorOf(['keys', 'update', KEY, '--budget-unit', 'usd'])).toContain('go with --budget');
      expect(usageErrorOf(['keys', 'update', KEY, '--budget', '1', '--budget-period', 'week'])).toContain('--budget-period must be');
      expect(usageErrorOf(['keys', 'update', KEY, '--metadata', 'owner'])).toContain('name=value');
      expect(usageErrorOf(['keys', 'update', KEY, '--rpm', '0'])).toContain('--rpm must be');
    });

    it('revokes a key and describes the 204 output', () => {
      expect(requestOf(['keys', 'revoke', KEY])).toEqual({
        method: 'DELETE',
        path: `/admin/v1/keys/${KEY}`,
        noContentOutput: { revoked: KEY },
      });
    });

    it('rejects a missing id and stray options', () => {
      expect(usageErrorOf(['keys', 'revoke'])).toContain('"keys revoke" needs <keyId>');
      expect(usageErrorOf(['keys', 'revoke', KEY, '--name', 'x'])).toContain('--name is not an option of "keys revoke"');
    });
  });

  describe('credits add', () => {
    it('takes the amount as --credits as accounts create does, negative ones too', () => {
      expect(requestOf(['credits', 'add', ACCOUNT, '--credits', '1000']).body).toEqual({ credits: 1000 });
      expect(requestOf(['credits', 'add', ACCOUNT, '--credits', '-250000', '--reason', 'refund correction']).body).toEqual({ credits: -250000, reason: 'refund correction' });
      expect(usageErrorOf(['credits', 'add', ACCOUNT, '5', '--credits', '5'])).toMatch(/once.*<credits> and --credits/);
      expect(usageErrorOf(['credits', 'add', ACCOUNT, '--usd', '1', '--credits', '5'])).toMatch(/once.*--credits and --usd/);
    });

    it('adds positive credits with a reason', () => {
      expect(requestOf(['credits', 'add', ACCOUNT, '500', '--reason', 'monthly top-up'])).toEqual({
        method: 'POST',
        path: `/admin/v1/accounts/${ACCOUNT}/credits`,
        body: { credits: 500, reason: 'monthly top-up' },
      });
    });

    it.each([
      ['-5', -5],
      ['-0.5', -0.5],
      ['-.25', -0.25],
      ['-1e3', -1000],
      ['-250', -250],
    ])('takes the negative number %s as <credits>, not as an option', (raw, expected) => {
      expect(requestOf(['credits', 'add', ACCOUNT, raw]).body).toEqual({ credits: expected });
    });

    it('takes negative credits wherever the options are', () => {
      const expected = { credits: -5, reason: 'correction' };
      expect(requestOf(['credits', 'add', ACCOUNT, '-5', '--reason', 'correction']).body).toEqual(expected);
      expect(requestOf(['credits', 'add', '--reason', 'correction', ACCOUNT, '-5']).body).toEqual(expected);
      expect(requestOf(['--token', 'x'.repeat(20), 'credits', 'add', ACCOUNT, '-5', '--reason=correction']).body).toEqual(expected);
    });

    it('also accepts negative credits after --', () => {
      expect(requestOf(['credits', 'add', ACCOUNT, '--', '-5']).body).toEqual({ credits: -5 });
      expect(requestOf(['credits', 'add', '--reason', 'r', '--', ACCOUNT, '-5']).body).toEqual({ credits: -5, reason: 'r' });
    });

    it('keeps a reason that looks like a negative number', () => {
      expect(requestOf(['credits', 'add', ACCOUNT, '10', '--reason', '-3']).body).toEqual({ credits: 10, reason: '-3' });
    });

    it('still rejects real unknown short or long options', () => {
      expect(usageErrorOf(['credits', 'add', ACCOUNT, '-x'])).toMatch(/Unknown option '-x'/);
      expect(usageErrorOf(['credits', 'add', ACCOUNT, '5', '--force'])).toMatch(/Unknown option '--force'/);
      expect(usageErrorOf(['credits', 'add', ACCOUNT, '-5abc'])).toMatch(/Unknown option/);
    });

    it('needs both the account and a numeric amount', () => {
      expect(usageErrorOf(['credits', 'add', ACCOUNT])).toContain('"credits add" needs <accountId> <credits>');
      expect(usageErrorOf(['credits', 'add', ACCOUNT, 'ten'])).toContain('<credits> must be a number, got "ten"');
      expect(usageErrorOf(['credits', 'add', ACCOUNT, '5', '6'])).toContain('Unexpected argument "6"');
    });
  });

  describe('accounts update', () => {
    it('PATCHes only the settings given, with the API field names', () => {
      expect(requestOf(['accounts', 'update', ACCOUNT, '--plan', 'paid'])).toEqual({
        method: 'PATCH',
        path: `/admin/v1/accounts/${ACCOUNT}`,
        body: { plan: 'paid' },
      });
      const argv = ['accounts', 'update', ACCOUNT, '--name', 'Acme', '--status', 'suspended', '--auto-debit', 'enabled'];
      argv.push('--low-balance-threshold', '12.5', '--rpm', '120', '--concurrency', '4');
      expect(requestOf(argv).body).toEqual({
        name: 'Acme',
        status: 'suspended',
        autoDebitStatus: 'enabled',
        lowBalanceThreshold: 12.5,
        requestsPerMinute: 120,
        concurrentRequests: 4,
      });
    });

    it('sends null for a limit of "none", to remove the override', () => {
      const request = requestOf(['accounts', 'update', ACCOUNT, '--rpm', 'none', '--concurrency=None']);
      expect(request.body).toStrictEqual({ requestsPerMinute: null, concurrentRequests: null });
      expect(JSON.stringify(request.body)).toBe('{"requestsPerMinute":null,"concurrentRequests":null}');
    });

    it('takes a zero threshold', () => {
      expect(requestOf(['accounts', 'update', ACCOUNT, '--low-balance-threshold', '0']).body).toStrictEqual({ lowBalanceThreshold: 0 });
    });

    it.each([
      [['--plan', 'gold'], '--plan must be "free" or "paid", got "gold"'],
      [['--status', 'paused'], '--status must be "active" or "suspended", got "paused"'],
      [['--auto-debit', 'on'], '--auto-debit must be "enabled" or "disabled", got "on"'],
      [['--low-balance-threshold', 'lots'], '--low-balance-threshold must be a number, got "lots"'],
      [['--rpm', '0'], '--rpm must be a whole number of at least 1 or "none", got "0"'],
      [['--rpm', '1.5'], '--rpm must be a whole number of at least 1 or "none", got "1.5"'],
      [['--rpm', '-5'], '--rpm must be a whole number of at least 1 or "none", got "-5"'],
      [['--concurrency', 'unlimited'], '--concurrency must be a whole number of at least 1 or "none", got "unlimited"'],
      [['--credits', '5'], '--credits is not an option of "accounts update"'],
    ])('rejects %j', (options, message) => {
      expect(usageErrorOf(['accounts', 'update', ACCOUNT, ...options])).toContain(message);
    });

    it('needs the account and at least one setting', () => {
      expect(usageErrorOf(['accounts', 'update'])).toContain('"accounts update" needs <accountId>');
      expect(usageErrorOf(['accounts', 'update', ACCOUNT])).toContain('"accounts update" needs at least one of --name, --plan, --status');
    });
  });

  describe('usage', () => {
    it('lists without a query string when no filter is given', () => {
      expect(requestOf(['usage', 'list', ACCOUNT])).toEqual({ method: 'GET', path: `/admin/v1/accounts/${ACCOUNT}/usage` });
    });

    it('passes every filter as an encoded query parameter', () => {
      const argv = ['usage', 'list', ACCOUNT, '--from', '2025-01-01T00:00:00+01:00', '--to', '2025-02-01', '--model', 'openai/gpt-4o-mini'];
      argv.push('--key', KEY, '--kind', 'usage', '--limit', '50', '--cursor', 'WyIyMDI1Il0');
      const request = requestOf(argv);
      expect(request.method).toBe('GET');
      const url = new URL(request.path, 'http://billing');
      expect(url.pathname).toBe(`/admin/v1/accounts/${ACCOUNT}/usage`);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        from: '2025-01-01T00:00:00+01:00',
        to: '2025-02-01',
        model: 'openai/gpt-4o-mini',
        key: KEY,
        kind: 'usage',
        limit: '50',
        cursor: 'WyIyMDI1Il0',
      });
      expect(request.path).toContain('from=2025-01-01T00%3A00%3A00%2B01%3A00');
      expect(request.body).toBeUndefined();
    });

    it('summarises with an optional window', () => {
      expect(requestOf(['usage', 'summary', ACCOUNT])).toEqual({ method: 'GET', path: `/admin/v1/accounts/${ACCOUNT}/usage/summary` });
      expect(requestOf(['usage', 'summary', ACCOUNT, '--from', '2025-01-01', '--to', '2025-02-01']).path).toBe(
        `/admin/v1/accounts/${ACCOUNT}/usage/summary?from=2025-01-01&to=2025-02-01`,
      );
    });

    it('summarises by key and hour, filtered by model and key', () => {
      const request = requestOf(['usage', 'summary', ACCOUNT, '--group-by', 'model,key', '--granularity', 'hour', '--model', 'gpt-4o-mini', '--key', ACCOUNT]);
      expect(request).toEqual({
        method: 'GET',
        path: `/admin/v1/accounts/${ACCOUNT}/usage/summary?model=gpt-4o-mini&key=${ACCOUNT}&groupBy=model%2Ckey&granularity=hour`,
        modelToResolve: 'gpt-4o-mini',
      });
    });

    it.each([
      [['usage', 'list', ACCOUNT, '--limit', 'all'], '--limit must be a whole number of at least 1, got "all"'],
      [['usage', 'list', ACCOUNT, '--limit', '0'], '--limit must be a whole number of at least 1, got "0"'],
      [['usage', 'list', ACCOUNT, '--kind', 'refund'], '--kind must be "usage" or "credit", got "refund"'],
      [['usage', 'summary', ACCOUNT, '--kind', 'usage'], '--kind is not an option of "usage summary"'],
      [['usage', 'summary', ACCOUNT, '--granularity', 'week'], '--granularity must be "day" or "hour", got "week"'],
      [['usage', 'list'], '"usage list" needs <accountId>'],
      [['usage', 'summary'], '"usage summary" needs <accountId>'],
      [['usage', 'list', ACCOUNT, '--from'], '--from'],
    ])('rejects %j', (argv, message) => {
      expect(usageErrorOf(argv)).toContain(message);
    });

    it('reports an unknown usage command', () => {
      expect(usageErrorOf(['usage', 'export', ACCOUNT])).toBe('Unknown command "usage export".');
    });
  });

  describe('the response cache', () => {
    it('sets an account\'s and a key\'s cache from the cache options, in the admin API\'s shape', () => {
      expect(requestOf(['accounts', 'create', '--name', 'a', '--cache-enabled', 'true', '--cache-ttl', '600', '--cache-max-ttl', '3600', '--cache-scope', 'key'])).toEqual({
        method: 'POST',
        path: '/admin/v1/accounts',
        body: { name: 'a', cache: { enabled: true, ttlSeconds: 600, maxTtlSeconds: 3600, scope: 'key' } },
      });
      expect(requestOf(['accounts', 'update', ACCOUNT, '--cache-enabled', 'false'])).toEqual({ method: 'PATCH', path: `/admin/v1/accounts/${ACCOUNT}`, body: { cache: { enabled: false } } });
      expect(requestOf(['keys', 'create', ACCOUNT, '--cache-scope', 'account'])).toEqual({ method: 'POST', path: `/admin/v1/accounts/${ACCOUNT}/keys`, body: { cache: { scope: 'account' } } });
      expect(requestOf(['keys', 'update', KEY, '--cache-ttl', '60', '--rpm', '5'])).toEqual({ method: 'PATCH', path: `/admin/v1/keys/${KEY}`, body: { rpm: 5, cache: { ttlSeconds: 60 } } });
    });

    it('removes it with --cache none, alone', () => {
      expect(requestOf(['accounts', 'update', ACCOUNT, '--cache', 'none'])).toEqual({ method: 'PATCH', path: `/admin/v1/accounts/${ACCOUNT}`, body: { cache: null } });
      expect(requestOf(['keys', 'update', KEY, '--cache', 'NONE'])).toEqual({ method: 'PATCH', path: `/admin/v1/keys/${KEY}`, body: { cache: null } });
      expect(usageErrorOf(['keys', 'update', KEY, '--cache', 'none', '--cache-ttl', '60'])).toBe('--cache none takes no --cache-ttl.');
      expect(usageErrorOf(['accounts', 'update', ACCOUNT, '--cache', 'on'])).toContain('--cache takes only "none"');
    });

    it('refuses values the options cannot mean', () => {
      expect(usageErrorOf(['accounts', 'update', ACCOUNT, '--cache-enabled', 'yes'])).toBe('--cache-enabled must be "true" or "false", got "yes".');
      expect(usageErrorOf(['keys', 'update', KEY, '--cache-ttl', '1.5'])).toBe('--cache-ttl must be a whole number of at least 1, got "1.5".');
      expect(usageErrorOf(['keys', 'update', KEY, '--cache-max-ttl', '0'])).toBe('--cache-max-ttl must be a whole number of at least 1, got "0".');
      expect(usageErrorOf(['keys', 'create', ACCOUNT, '--cache-scope', 'global'])).toBe('--cache-scope must be "account" or "key", got "global".');
      expect(usageErrorOf(['accounts', 'update', ACCOUNT])).toContain('--cache-enabled');
    });

    it('clears an account\'s entries, narrowed to a model (resolved by the gateway, as usage list does) and a key', () => {
      expect(requestOf(['cache', 'clear', '--account', ACCOUNT])).toEqual({ method: 'DELETE', path: `/admin/v1/cache?account=${ACCOUNT}` });
      expect(requestOf(['cache', 'clear', '--account', ACCOUNT, '--model', 'openai/gpt-4o-mini', '--key', KEY])).toEqual({
        method: 'DELETE',
        path: `/admin/v1/cache?account=${ACCOUNT}&model=openai%2Fgpt-4o-mini&key=${KEY}`,
        modelToResolve: 'openai/gpt-4o-mini',
      });
      expect(usageErrorOf(['cache', 'clear'])).toBe('"cache clear" needs --account <accountId>.');
      expect(usageErrorOf(['cache', 'clear', ACCOUNT])).toBe(`Unexpected argument "${ACCOUNT}" for "cache clear".`);
      expect(usageErrorOf(['cache', 'clear', '--account', ACCOUNT, '--name', 'x'])).toBe('--name is not an option of "cache clear".');
    });
  });

  describe('help, connection options and errors', () => {
    it.each([[['help']], [['--help']], [['-h']]])('%j asks for help', (argv) => {
      expect(parseCommand(argv)).toEqual<Command>({ kind: 'help' });
    });

    it.each([
      [['accounts', 'create', '--help'], 'accounts create'],
      [['help', 'keys'], 'keys'],
      [['help', 'credits', 'add'], 'credits add'],
    ])('%j asks for the help of %s', (argv, command) => {
      expect(parseCommand(argv)).toEqual<Command>({ kind: 'help', command });
    });

    it('names the command a usage mistake was meant for, so its own help can follow the error', () => {
      const commandOf = (argv: string[]) => {
        try {
          parseCommand(argv);
        } catch (error) {
          if (error instanceof UsageError) return error.command;
          throw error;
        }
        throw new Error('expected a usage error');
      };
      expect(commandOf(['credits', 'add', ACCOUNT, '5', '--force'])).toBe('credits add');
      expect(commandOf(['accounts', 'create', '--plan', 'gold'])).toBe('accounts create');
      expect(commandOf(['keys', 'delete', KEY])).toBe('keys');
      expect(commandOf(['wat'])).toBeUndefined();
    });

    it('returns --url and --token as connection options', () => {
      const command = parseCommand(['accounts', 'get', ACCOUNT, '--url', 'http://billing:8081', '--token=secret-token-0123456']);
      expect(command).toEqual<Command>({
        kind: 'request',
        request: { method: 'GET', path: `/admin/v1/accounts/${ACCOUNT}` },
        connection: { url: 'http://billing:8081', token: 'secret-token-0123456' },
      });
    });

    it('reports a missing or unknown command', () => {
      expect(usageErrorOf([])).toBe('Missing command.');
      expect(usageErrorOf(['accounts'])).toBe('Unknown command "accounts".');
      expect(usageErrorOf(['accounts', 'delete', ACCOUNT])).toBe('Unknown command "accounts delete".');
      expect(usageErrorOf(['wat'])).toBe('Unknown command "wat".');
    });

    it('reports an option without its value', () => {
      expect(usageErrorOf(['keys', 'create', ACCOUNT, '--name'])).toMatch(/--name/);
      expect(usageErrorOf(['accounts', 'get', ACCOUNT, '--url'])).toMatch(/--url/);
    });
  });
});
