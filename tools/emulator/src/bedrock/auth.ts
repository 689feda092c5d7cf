// Who may call the emulated Bedrock: a SigV4 signature recomputed with @smithy/signature-v4 from
// the secret of the access key it names (a static pair the test gave, or session credentials this
// emulator's STS issued and that have not expired), or a Bedrock API key sent as a bearer token.
// The refusals are AWS's own: UnrecognizedClientException for a key it does not know,
// InvalidSignatureException for a signature that does not match, ExpiredTokenException for
// session credentials past their expiration.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export interface BedrockEmulatorOptions {
  /** Static access key pairs the emulator knows: access key id → secret access key. */
  accessKeys?: Readonly<Record<string, string>>;
  /** Bedrock API keys it takes as `Authorization: Bearer <key>`. */
  apiKeys?: readonly string[];
  /** The only web identity token AssumeRoleWithWebIdentity accepts; any non-empty token when absent. */
  webIdentityToken?: string;
  /** Roles AssumeRole may assume, by ARN, with the ExternalId each requires. */
  roles?: Readonly<Record<string, { externalId?: string }>>;
  /** How long the credentials its STS issues last (default 3600 s); short, so a client's refresh is exercised. */
  sessionSeconds?: number;
}

export interface AwsRefusal {
  status: number;
  type: string;
  message: string;
}

interface SessionCredentials {
  secretAccessKey: string;
  sessionToken: string;
  expiresAt: number;
  roleArn: string;
}

const Sha256 = Hash.bind(null, 'sha256');
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/;

/** The signers of the emulated accounts, and the session credentials their STS issued. */
export class BedrockAccounts {
  private readonly sessions = new Map<string, SessionCredentials>();
  /** Credentials issued so far, by action (tests count refreshes). */
  readonly issued = { AssumeRoleWithWebIdentity: 0, AssumeRole: 0 };

  constructor(readonly options: BedrockEmulatorOptions = {}) {}

  /** Issues session credentials for a role, lasting `sessionSeconds`. */
  issue(roleArn: string): { accessKeyId: string; secretAccessKey: string; sessionToken: string; expiration: Date } {
    const accessKeyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const session: SessionCredentials = {
      secretAccessKey: randomBytes(20).toString('base64'),
      sessionToken: randomBytes(48).toString('base64'),
      expiresAt: Date.now() + (this.options.sessionSeconds ?? 3600) * 1000,
      roleArn,
    };
    this.sessions.set(accessKeyId, session);
    return { accessKeyId, secretAccessKey: session.secretAccessKey, sessionToken: session.sessionToken, expiration: new Date(session.expiresAt) };
  }

  /**
   * Undefined when the request is authorized for `service`; else AWS's refusal. `body` is the
   * request's bytes as received (the signature covers their hash).
   */
  async refusal(req: IncomingMessage, body: Buffer | undefined, service: 'bedrock' | 'sts'): Promise<AwsRefusal | undefined> {
    const authorization = header(req, 'authorization');
    if (authorization === undefined) return { status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
    if (authorization.startsWith('Bearer ')) {
      if (service === 'bedrock' && this.options.apiKeys?.includes(authorization.slice(7).trim())) return undefined;
      return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    }
    const parsed = AUTHORIZATION.exec(authorization);
    if (parsed === null) return { status: 403, type: 'IncompleteSignatureException', message: 'Authorization header requires Credential, SignedHeaders and Signature parameters.' };
    const [, accessKeyId, , region, signedService, signedHeaders] = parsed;
    if (signedService !== service) return { status: 403, type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}'.` };
    const staticSecret = this.options.accessKeys?.[accessKeyId];
    const session = this.sessions.get(accessKeyId);
    if (staticSecret === undefined && session === undefined) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    if (session !== undefined) {
      if (header(req, 'x-amz-security-token') !== session.sessionToken) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
      if (Date.now() >= session.expiresAt) return { status: 403, type: 'ExpiredTokenException', message: 'The security token included in the request is expired' };
    }
    const date = header(req, 'x-amz-date');
    const signingDate = date === undefined ? undefined : parseAmzDate(date);
    if (signingDate === undefined) return { status: 403, type: 'IncompleteSignatureException', message: 'Authorization header requires existence of either a X-Amz-Date or a Date header.' };
    if (Math.abs(Date.now() - signingDate.getTime()) > 15 * 60_000) return { status: 403, type: 'InvalidSignatureException', message: 'Signature expired: the request time is more than 5 minutes from the current time.' };
    const credentials = { accessKeyId, secretAccessKey: staticSecret ?? session!.secretAccessKey, ...(session !== undefined && { sessionToken: session.sessionToken }) };
    const signer = new SignatureV4({ service, region, credentials, sha256: Sha256 });
    const headers: Record<string, string> = {};
    for (const name of signedHeaders.split(';')) {
      const value = header(req, name);
      if (value !== undefined) headers[name] = value;
    }
    const target = req.url ?? '/';
    const queryAt = target.indexOf('?');
    const query: Record<string, string | string[]> = {};
    for (const [name, value] of new URLSearchParams(queryAt === -1 ? '' : target.slice(queryAt + 1))) {
      const present = query[name];
      query[name] = present === undefined ? value : Array.isArray(present) ? [...present, value] : [present, value];
    }
    const expected = await signer.sign(
      { method: req.method ?? 'POST', protocol: 'http:', hostname: 'localhost', path: queryAt === -1 ? target : target.slice(0, queryAt), query, headers, body: body ?? '' },
      { signingDate, signingRegion: region, signingService: service },
    );
    if (expected.headers.authorization !== authorization) {
      return { status: 403, type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' };
    }
    return undefined;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(',') : value;
}

/** `20261202T182200Z` → its date. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (match === null) return undefined;
  const [, year, month, day, hours, minutes, seconds] = match.map(Number);
  return new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds));
}
