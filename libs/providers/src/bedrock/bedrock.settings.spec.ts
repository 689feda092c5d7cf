import type { AwsCredentialIdentity } from '@smithy/types';
import { readProvidersFile } from '../connections/providers-file';
import { UpstreamUnavailableError } from '../upstream.errors';
import { bedrockAuthorizer, cachedCredentials, environmentBedrockSettings, type BedrockSettings } from './bedrock.settings';

const environment = { AWS_KEY_ID: 'AKIAFILEKEY000000001', AWS_SECRET: 'file-secret-value', EXTERNAL: 'ext-7' };
const read = (text: string) => readProvidersFile('providers.yaml', environment, () => text);

describe('kind: bedrock in the providers file', () => {
  it('reads the region, static keys as secrets, and a role to assume; needs no apiKey nor baseUrl', () => {
    const content = read(`
connections:
  - name: bedrock-east
    kind: bedrock
    region: us-east-1
    aws: { accessKeyId: "\${AWS_KEY_ID}", secretAccessKey: "\${AWS_SECRET}", roleArn: "arn:aws:iam::123456789012:role/bedrock", externalId: "\${EXTERNAL}" }
  - { name: bedrock-west, kind: bedrock, region: us-west-2 }
  - { name: bedrock-profile, kind: bedrock, region: eu-west-1, aws: { profile: prod } }
`);
    expect(content.connections[0]).toMatchObject({
      baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com',
      cloud: {
        kind: 'bedrock',
        region: 'us-east-1',
        connection: 'bedrock-east',
        credentials: { kind: 'static', accessKeyId: 'AKIAFILEKEY000000001', secretAccessKey: 'file-secret-value' },
        assumeRole: { roleArn: 'arn:aws:iam::123456789012:role/bedrock', externalId: 'ext-7' },
      },
    });
    expect(typeof content.connections[0].authorize).toBe('function');
    expect(content.secrets).toEqual(expect.arrayContaining(['AKIAFILEKEY000000001', 'file-secret-value']));
    expect(content.connections[1].cloud).toMatchObject({ credentials: { kind: 'default-chain' } });
    expect(content.connections[2].cloud).toMatchObject({ credentials: { kind: 'profile', profile: 'prod' } });
  });

  it.each([
    ['{ name: b, kind: bedrock }', 'connections[0] (b).region: expected an AWS region'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { accessKeyId: AKIAWRITTENINFILE } }', 'connections[0] (b).aws.accessKeyId: expected ${VARIABLE}'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { accessKeyId: "${AWS_KEY_ID}" } }', 'connections[0] (b).aws.secretAccessKey: needed with accessKeyId'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { secretAccessKey: "${MISSING}" } }', 'connections[0] (b).aws.secretAccessKey: the environment has no MISSING'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { accessKeyId: "${AWS_KEY_ID}", secretAccessKey: "${AWS_SECRET}", profile: p } }', 'connections[0] (b).aws.profile: set static keys'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { roleArn: "not-an-arn" } }', 'connections[0] (b).aws.roleArn: expected an IAM role ARN'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { externalId: x } }', 'connections[0] (b).aws.externalId: only used with roleArn'],
    ['{ name: b, kind: bedrock, region: us-east-1, aws: { secretKey: x } }', 'connections[0] (b).aws.secretKey: unknown field'],
  ])('refuses %s naming the field', (entry, message) => {
    expect(() => read(`connections:\n  - ${entry}`)).toThrow(message);
  });

  it('never quotes a key written in the file back', () => {
    expect(() => read('connections:\n  - { name: b, kind: bedrock, region: us-east-1, aws: { secretAccessKey: written-secret-value } }')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('written-secret-value') }),
    );
  });
});

describe('cachedCredentials', () => {
  const settings: Pick<BedrockSettings, 'connection' | 'credentials'> = { connection: 'bedrock-east', credentials: { kind: 'default-chain' } };
  const issued = (expiresAt: number): AwsCredentialIdentity => ({ accessKeyId: 'ASIA1', secretAccessKey: 'secret', sessionToken: 't', expiration: new Date(expiresAt) });

  it('fetches once for concurrent calls and keeps the credentials until 5 minutes before they expire', async () => {
    let now = 0;
    const provider = jest.fn((_options?: { forceRefresh?: boolean }) => Promise.resolve(issued(now + 3_600_000)));
    const credentials = cachedCredentials(settings, provider, () => now);
    await Promise.all([credentials(), credentials(), credentials()]);
    expect(provider).toHaveBeenCalledTimes(1);
    now = 3_600_000 - 300_001;
    await credentials();
    expect(provider).toHaveBeenCalledTimes(1);
    now = 3_600_000 - 299_999;
    await credentials();
    expect(provider).toHaveBeenCalledTimes(2);
    // A renewal is forced: the SDK's chain would otherwise hand back what it holds.
    expect(provider.mock.calls).toEqual([[undefined], [{ forceRefresh: true }]]);
  });

  it('renews short-lived credentials at half their life', async () => {
    let now = 0;
    const provider = jest.fn(() => Promise.resolve(issued(now + 4_000)));
    const credentials = cachedCredentials(settings, provider, () => now);
    await credentials();
    now = 1_999;
    await credentials();
    expect(provider).toHaveBeenCalledTimes(1);
    now = 2_000;
    await credentials();
    expect(provider).toHaveBeenCalledTimes(2);
  });

  it('keeps valid credentials when a renewal fails, and says what to fix, without a secret, once none are left', async () => {
    let now = 0;
    const provider = jest.fn().mockResolvedValueOnce(issued(4_000)).mockRejectedValue(new Error('Could not load credentials from any providers'));
    const credentials = cachedCredentials(settings, provider, () => now);
    await credentials();
    now = 3_000;
    await expect(credentials()).resolves.toMatchObject({ accessKeyId: 'ASIA1' });
    now = 4_000;
    const failure = await credentials().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamUnavailableError);
    expect((failure as Error).message).toContain('bedrock-east is unreachable: no AWS credentials for Bedrock from the default chain');
    expect((failure as Error).message).toContain('Could not load credentials from any providers');
    expect((failure as Error).message).not.toContain('secret');
  });
});

describe('the built-in bedrock connection', () => {
  it('is enabled by BEDROCK_REGION and takes its credentials from the default chain', () => {
    expect(environmentBedrockSettings({})).toBeUndefined();
    expect(environmentBedrockSettings({ BEDROCK_REGION: 'eu-central-1' })).toEqual({ kind: 'bedrock', region: 'eu-central-1', connection: 'bedrock', credentials: { kind: 'default-chain' } });
  });

  it('sends a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) as a bearer token, leaving the other headers as they are', async () => {
    const authorize = bedrockAuthorizer(environmentBedrockSettings({ BEDROCK_REGION: 'us-east-1' })!, 'bedrock-api-key');
    const request = { method: 'POST' as const, url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' };
    await expect(authorize(request)).resolves.toEqual({ headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer bedrock-api-key' } });
  });
});
