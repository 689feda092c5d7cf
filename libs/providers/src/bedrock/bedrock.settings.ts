import { fromIni, fromNodeProviderChain, fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { AuthorizedRequest, OutgoingRequest, RequestAuthorizer } from '../transport/http-client';
import type { ProviderVariables } from '../connections/connections';
import type { CloudSettingsReader } from '../connections/cloud';
import { UpstreamUnavailableError } from '../upstream.errors';

/** Fields a `kind: bedrock` entry of the providers file may carry beyond the common ones. */
export const BEDROCK_FIELDS: readonly string[] = ['region', 'aws'];

/** The members of a Bedrock entry's `aws:` mapping. */
const AWS_FIELDS: readonly string[] = ['accessKeyId', 'secretAccessKey', 'sessionToken', 'profile', 'roleArn', 'externalId', 'roleSessionName'];

/** Where a connection's AWS credentials come from, before any role is assumed. */
export type AwsCredentialSource =
  /** The SDK's default chain: environment, shared profile, IRSA web identity, EKS Pod Identity, ECS, instance metadata. */
  | { kind: 'default-chain' }
  | { kind: 'static'; accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  | { kind: 'profile'; profile: string };

/** A role assumed (STS AssumeRole) with the source's credentials. */
export interface AwsAssumedRole {
  roleArn: string;
  externalId?: string;
  roleSessionName?: string;
}

/** How a Bedrock connection reaches its region and signs its calls. */
export interface BedrockSettings {
  kind: 'bedrock';
  region: string;
  /** The connection's name, for the errors its credentials raise. */
  connection: string;
  credentials: AwsCredentialSource;
  assumeRole?: AwsAssumedRole;
}

/** SHA-256 as the signer takes it: a constructor of hashes, keyed for HMACs. */
export const Sha256 = Hash.bind(null, 'sha256');

const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const ROLE_SESSION_NAME = /^[\w+=,.@-]{2,64}$/;
const VARIABLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** `https://bedrock-runtime.{region}.amazonaws.com`. */
export function bedrockBaseUrl(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** Reads the Bedrock fields of a providers-file entry. */
export const readBedrockSettings: CloudSettingsReader<BedrockSettings> = (entry, context) => {
  const region = entry.region;
  if (typeof region !== 'string' || !REGION.test(region)) context.fail('region', 'expected an AWS region, e.g. us-east-1');
  const settings: BedrockSettings = { kind: 'bedrock', region: region as string, connection: String(entry.name), credentials: { kind: 'default-chain' } };
  const aws = entry.aws;
  if (aws === undefined || aws === null) return settings;
  if (typeof aws !== 'object' || Array.isArray(aws)) return context.fail('aws', `expected a mapping of ${AWS_FIELDS.join(', ')}`);
  const fields = aws as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (!AWS_FIELDS.includes(key)) context.fail(`aws.${key}`, `unknown field (known: ${AWS_FIELDS.join(', ')})`);
  const secret = (name: 'accessKeyId' | 'secretAccessKey' | 'sessionToken'): string | undefined => {
    const value = fields[name];
    if (value === undefined) return undefined;
    // Never quoted back: it may be the very secret the file must not hold.
    if (typeof value !== 'string' || !VARIABLE_REFERENCE.test(value.trim())) context.fail(`aws.${name}`, 'expected ${VARIABLE}, read from the environment (a key written in the file is refused)');
    const expanded = context.expand(`aws.${name}`, (value as string).trim());
    if (expanded === '') context.fail(`aws.${name}`, 'the variable it names is empty');
    return expanded;
  };
  const accessKeyId = secret('accessKeyId');
  const secretAccessKey = secret('secretAccessKey');
  const sessionToken = secret('sessionToken');
  const profile = fields.profile;
  if (profile !== undefined && (typeof profile !== 'string' || profile.trim() === '')) context.fail('aws.profile', 'expected the name of a profile of the shared AWS config or credentials file');
  if (accessKeyId !== undefined || secretAccessKey !== undefined || sessionToken !== undefined) {
    if (profile !== undefined) context.fail('aws.profile', 'set static keys (accessKeyId, secretAccessKey) or a profile, not both');
    if (accessKeyId === undefined) context.fail('aws.accessKeyId', 'needed with secretAccessKey');
    if (secretAccessKey === undefined) context.fail('aws.secretAccessKey', 'needed with accessKeyId');
    settings.credentials = { kind: 'static', accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey!, ...(sessionToken !== undefined && { sessionToken }) };
  } else if (profile !== undefined) {
    settings.credentials = { kind: 'profile', profile: (profile as string).trim() };
  }
  const roleArn = fields.roleArn;
  if (roleArn !== undefined) {
    if (typeof roleArn !== 'string' || !ROLE_ARN.test(roleArn)) context.fail('aws.roleArn', 'expected an IAM role ARN, e.g. arn:aws:iam::123456789012:role/bedrock-caller');
    const role: AwsAssumedRole = { roleArn: roleArn as string };
    const externalId = fields.externalId;
    if (externalId !== undefined) {
      if (typeof externalId !== 'string' || externalId === '') context.fail('aws.externalId', 'expected a string (the ExternalId the role trust policy requires)');
      role.externalId = context.expand('aws.externalId', externalId as string);
    }
    const sessionName = fields.roleSessionName;
    if (sessionName !== undefined) {
      if (typeof sessionName !== 'string' || !ROLE_SESSION_NAME.test(sessionName)) context.fail('aws.roleSessionName', 'expected 2 to 64 letters, digits or +=,.@_-');
      role.roleSessionName = sessionName as string;
    }
    settings.assumeRole = role;
  } else {
    if (fields.externalId !== undefined) context.fail('aws.externalId', 'only used with roleArn');
    if (fields.roleSessionName !== undefined) context.fail('aws.roleSessionName', 'only used with roleArn');
  }
  return settings;
};

/** The built-in `bedrock` connection's settings, from the environment; undefined when it names no region. */
export function environmentBedrockSettings(variables: ProviderVariables): BedrockSettings | undefined {
  const region = variables.BEDROCK_REGION;
  return region ? { kind: 'bedrock', region, connection: 'bedrock', credentials: { kind: 'default-chain' } } : undefined;
}

/**
 * Signs each call (SigV4, service `bedrock`), or sends the Bedrock API key as a bearer token when
 * the connection has one. Made once per connection: its credentials are cached across calls.
 */
export function bedrockAuthorizer(settings: BedrockSettings, apiKey: string | undefined): RequestAuthorizer {
  if (apiKey !== undefined && apiKey !== '') {
    return (request) => Promise.resolve({ headers: { ...request.headers, authorization: `Bearer ${apiKey}` } });
  }
  const credentials = cachedCredentials(settings, credentialProviderOf(settings));
  const signer = new SignatureV4({ service: 'bedrock', region: settings.region, credentials, sha256: Sha256 });
  return (request) => signRequest(signer, request);
}

/** Signs with `signer`: the host and every header the call sends are signed, its body hashed. */
export async function signRequest(signer: SignatureV4, request: OutgoingRequest): Promise<AuthorizedRequest> {
  const url = new URL(request.url);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const present = query[name];
    query[name] = present === undefined ? value : Array.isArray(present) ? [...present, value] : [present, value];
  }
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: url.pathname,
    query,
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  return { headers: signed.headers };
}

function credentialProviderOf(settings: BedrockSettings): AwsCredentialIdentityProvider {
  const clientConfig = { region: settings.region };
  const source = settings.credentials;
  const base: AwsCredentialIdentityProvider =
    source.kind === 'static'
      ? () => Promise.resolve({ accessKeyId: source.accessKeyId, secretAccessKey: source.secretAccessKey, ...(source.sessionToken !== undefined && { sessionToken: source.sessionToken }) })
      : source.kind === 'profile'
        ? fromIni({ profile: source.profile, clientConfig })
        : fromNodeProviderChain({ clientConfig });
  const role = settings.assumeRole;
  if (role === undefined) return base;
  return fromTemporaryCredentials({
    masterCredentials: base,
    params: { RoleArn: role.roleArn, RoleSessionName: role.roleSessionName ?? 'inference-gateway', ...(role.externalId !== undefined && { ExternalId: role.externalId }) },
    clientConfig,
  });
}

/** Credentials are renewed this long before they expire at most (AWS's own SDKs use 5 minutes). */
const REFRESH_AHEAD_MS = 5 * 60_000;

/**
 * The connection's credentials, fetched once and kept until shortly before they expire: 5
 * minutes ahead, or half their lifetime for credentials issued for less than 10 minutes, so
 * they are never fetched per request. Concurrent calls share one refresh; a refresh that fails
 * while the credentials held are still valid keeps them.
 */
export function cachedCredentials(settings: Pick<BedrockSettings, 'connection' | 'credentials' | 'assumeRole'>, provider: AwsCredentialIdentityProvider, now: () => number = Date.now): () => Promise<AwsCredentialIdentity> {
  let held: { credentials: AwsCredentialIdentity; renewAt: number } | undefined;
  let refreshing: Promise<AwsCredentialIdentity> | undefined;
  const refresh = (): Promise<AwsCredentialIdentity> =>
    // Forced: the SDK's default chain would hand back the credentials it holds while renewing
    // them in the background, which leaves a renewal here to luck.
    (refreshing ??= provider(held === undefined ? undefined : { forceRefresh: true })
      .then((credentials) => {
        const expiresAt = credentials.expiration?.getTime();
        const fetchedAt = now();
        const renewAt = expiresAt === undefined ? Infinity : expiresAt - Math.min(REFRESH_AHEAD_MS, Math.max(0, expiresAt - fetchedAt) / 2);
        held = { credentials, renewAt };
        return credentials;
      })
      .catch((error: unknown) => {
        const still = held?.credentials.expiration;
        if (held !== undefined && (still === undefined || still.getTime() > now())) return held.credentials;
        throw credentialsError(settings, error);
      })
      .finally(() => {
        refreshing = undefined;
      }));
  return () => (held !== undefined && now() < held.renewAt ? Promise.resolve(held.credentials) : refresh());
}

/** Why a connection has no credentials, and where they could come from; the SDK's reason never holds a secret. */
function credentialsError(settings: Pick<BedrockSettings, 'connection' | 'credentials' | 'assumeRole'>, error: unknown): UpstreamUnavailableError {
  const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 300);
  const source = settings.credentials;
  const where =
    source.kind === 'static'
      ? 'its aws.accessKeyId / aws.secretAccessKey'
      : source.kind === 'profile'
        ? `the profile ${source.profile} of the shared AWS config`
        : 'the default chain (AWS_ACCESS_KEY_ID, AWS_PROFILE, an IRSA or EKS Pod Identity role on the pod, an ECS task role, instance metadata)';
  const role = settings.assumeRole ? ` to assume ${settings.assumeRole.roleArn}` : '';
  return new UpstreamUnavailableError(settings.connection, `no AWS credentials for Bedrock from ${where}${role}: ${reason}`);
}
