import { registerLogSecrets } from './secrets';
import { colorsWanted, ServiceLogger } from './service-logger';

describe('ServiceLogger', () => {
  let written: string[];
  let spies: jest.SpyInstance[];

  beforeEach(() => {
    written = [];
    const capture = (chunk: string | Uint8Array) => (written.push(chunk.toString()), true);
    spies = [jest.spyOn(process.stdout, 'write').mockImplementation(capture), jest.spyOn(process.stderr, 'write').mockImplementation(capture)];
  });

  afterEach(() => spies.forEach((spy) => spy.mockRestore()));

  it('colours only a terminal, unless NO_COLOR forbids or FORCE_COLOR asks', () => {
    expect([colorsWanted({}, true), colorsWanted({}, false), colorsWanted({}, undefined)]).toEqual([true, false, false]);
    expect([colorsWanted({ NO_COLOR: '1' }, true), colorsWanted({ FORCE_COLOR: '1' }, false), colorsWanted({ FORCE_COLOR: '0' }, true)]).toEqual([false, true, false]);
    // Output that is no terminal (as a pipe to a file), whatever runs this test: a line carries no escape code.
    const saved = { isTTY: process.stdout.isTTY, FORCE_COLOR: process.env.FORCE_COLOR, NO_COLOR: process.env.NO_COLOR };
    Object.defineProperty(process.stdout, 'isTTY', { value: false, configurable: true });
    delete process.env.FORCE_COLOR;
    delete process.env.NO_COLOR;
    try {
      new ServiceLogger('log', 'pretty').warn('plain', 'Test');
    } finally {
      Object.defineProperty(process.stdout, 'isTTY', { value: saved.isTTY, configurable: true });
      for (const name of ['FORCE_COLOR', 'NO_COLOR'] as const) if (saved[name] !== undefined) process.env[name] = saved[name];
    }
    expect(written.join('')).toContain('plain');
    expect(written.join('')).toBe(written.join('').replace(/\x1b\[[0-9;]*m/g, ''));
  });

  it('in the console format, writes an error with or without a stack, secrets replaced', () => {
    registerLogSecrets(['provider-secret-42']);
    const logger = new ServiceLogger('log', 'pretty');
    logger.error('upstream refused provider-secret-42', 'Errors');
    logger.error('with a stack', 'Error: boom\n    at somewhere (provider-secret-42:1:1)', 'Errors');
    const text = written.join('');
    expect(text).toContain('upstream refused [REDACTED]');
    expect(text).toContain('at somewhere ([REDACTED]:1:1)');
    expect(text).not.toContain('provider-secret-42');
  });

  it('keeps access-log lines for LOG_LEVEL=debug in the console format', () => {
    const logger = new ServiceLogger('log', 'pretty');
    const entry = {
      requestId: 'r-1',
      clientRequestId: undefined,
      service: 'gateway',
      method: 'POST',
      route: '/v1/embeddings',
      status: 200,
      durationMs: 3.2,
      clientAddress: '203.0.113.7',
      keyPrefix: 'igw_abcdef',
      model: 'm',
      provider: 'openai',
      deployment: 'openai/text-embedding-3-small',
      inputTokens: 3,
      outputTokens: 0,
      credits: 0.5,
      prompt: undefined,
      error: undefined,
    };
    expect(logger.accessLogged()).toBe(false);
    logger.setLevel('debug');
    expect(logger.accessLogged()).toBe(true);
    logger.access(entry);
    expect(written.join('')).toContain('POST /v1/embeddings 200 3.2ms client=203.0.113.7 key=igw_abcdef model=m provider=openai deployment=openai/text-embedding-3-small tokens=3/0 credits=0.5 request_id=r-1');
    logger.access({ ...entry, status: 404, model: 'no-such-model', provider: undefined, deployment: undefined, error: "Not Found: no model named 'no-such-model'" });
    expect(written.join('')).toContain(`POST /v1/embeddings 404 3.2ms client=203.0.113.7 key=igw_abcdef model=no-such-model provider=- deployment=- tokens=3/0 credits=0.5 request_id=r-1 error="Not Found: no model named 'no-such-model'"`);
  });
});
