import { redactSecrets } from '@igw/observability';
import path from 'node:path';
import { EnvironmentError, loadEnvironment, usageJournalDirectory } from './environment';

describe('loadEnvironment', () => {
  it('applies the documented defaults', () => {
    const { env } = loadEnvironment({});
    expect(env).toMatchObject({ HOST: '127.0.0.1', PORT: 8080, BILLING_PORT: 8081, DATA_DIR: '.data', CREDITS_PER_USD: 2_000_000, QUEUE_PREFIX: 'igw' });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.ADMIN_TOKEN).toBeUndefined();
  });

  it('keeps the usage journal in DATA_DIR unless USAGE_JOURNAL_DIR says otherwise', () => {
    expect(usageJournalDirectory(loadEnvironment({}).env)).toBe(path.join('.data', 'usage-journal'));
    expect(usageJournalDirectory(loadEnvironment({ DATA_DIR: '/var/lib/igw', USAGE_JOURNAL_DIR: '' }).env)).toBe(path.join('/var/lib/igw', 'usage-journal'));
    expect(usageJournalDirectory(loadEnvironment({ USAGE_JOURNAL_DIR: '/journal' }).env)).toBe('/journal');
  });

  it('reads numbers and treats empty values as unset', () => {
    const { env } = loadEnvironment({ PORT: '9000', DATABASE_URL: '', CREDITS_PER_USD: '1000' });
    expect(env.PORT).toBe(9000);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.CREDITS_PER_USD).toBe(1000);
  });

  it('reads DIRECT_ROUTES as true or false, on unless set, and its former name CHAT_FAST_PATH', () => {
    expect(loadEnvironment({}).env.DIRECT_ROUTES).toBe(true);
    expect(loadEnvironment({ DIRECT_ROUTES: 'false' }).env.DIRECT_ROUTES).toBe(false);
    expect(loadEnvironment({ DIRECT_ROUTES: 'TRUE' }).env.DIRECT_ROUTES).toBe(true);
    expect(loadEnvironment({}).env.CHAT_FAST_PATH).toBeUndefined();
    expect(loadEnvironment({ CHAT_FAST_PATH: 'false' }).env.CHAT_FAST_PATH).toBe(false);
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
    [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN must be at least 16/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ DIRECT_ROUTES: 'off' }, /DIRECT_ROUTES must be true or false/],
    [{ CHAT_FAST_PATH: 'off' }, /CHAT_FAST_PATH must be true or false/],
    [{ TRUSTED_PROXIES: '10.0.0.0/8, ingress.local' }, /TRUSTED_PROXIES: 'ingress.local' is not an IP address or a CIDR range/],
  ])('refuses %j', (source, message) => {
    expect(() => loadEnvironment(source)).toThrow(EnvironmentError);
    expect(() => loadEnvironment(source)).toThrow(message);
  });

  it('collects the provider variables of any provider name, and only those', () => {
    const { providers } = loadEnvironment({
      OPENAI_API_KEY: 'sk-1',
      OPENAI_BASE_URL: 'http://127.0.0.1:1234/v1/',
      AZURE_OPENAI_API_KEY: 'az',
      AZURE_OPENAI_ENDPOINT: 'https://x.openai.azure.com',
      GROQ_API_KEY: '',
      PATH: '/usr/bin',
    });
    expect(providers).toEqual({
      OPENAI_API_KEY: 'sk-1',
      OPENAI_BASE_URL: 'http://127.0.0.1:1234/v1/',
      AZURE_OPENAI_API_KEY: 'az',
      AZURE_OPENAI_ENDPOINT: 'https://x.openai.azure.com',
    });
  });

  it("collects the cloud platforms' variables, and redacts Bedrock's API key from the log", () => {
    const { providers } = loadEnvironment({
      BEDROCK_REGION: 'us-east-1',
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key-value',
      VERTEX_LOCATION: 'global',
      VERTEX_PROJECT: 'example-project',
      GOOGLE_CLOUD_PROJECT: 'fallback-project',
      GOOGLE_APPLICATION_CREDENTIALS: '/var/run/google/adc.json',
      AWS_SECRET_ACCESS_KEY: 'read by the AWS SDK itself',
    });
    expect(providers).toEqual({
      BEDROCK_REGION: 'us-east-1',
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key-value',
      VERTEX_LOCATION: 'global',
      VERTEX_PROJECT: 'example-project',
      GOOGLE_CLOUD_PROJECT: 'fallback-project',
      GOOGLE_APPLICATION_CREDENTIALS: '/var/run/google/adc.json',
    });
    expect(redactSecrets('signed with bedrock-api-key-value')).not.toContain('bedrock-api-key-value');
  });
});
