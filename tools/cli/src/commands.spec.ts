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

  describe('help, connection options and errors', () => {
    it.each([[['help']], [['--help']], [['-h']], [['accounts', 'create', '--help']], [['help', 'keys']]])('%j asks for help', (argv) => {
      expect(parseCommand(argv)).toEqual<Command>({ kind: 'help' });
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
