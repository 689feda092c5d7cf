// Google's OAuth 2.0 token endpoint for service accounts (the JWT-bearer grant), as Vertex AI's
// callers use it: `POST /token` with the form `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer
// &assertion=<JWT>`. The assertion must be RS256-signed by the service account's key (the emulator
// makes the key pair and hands out the account's JSON key file), name the account as `iss`, Google's
// token URL (or this endpoint) as `aud`, and not be expired. Tokens are opaque, live as long as the
// test sets, and are what the Vertex routes accept.
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';

/** The `aud` google-auth-library (and every Google client) signs for, whatever the key file's token_uri. */
export const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Google refuses an assertion that asks for more than an hour. */
const MAX_ASSERTION_SECONDS = 3600;
/** Clock skew allowed on `iat`. */
const SKEW_SECONDS = 60;

export interface VertexEmulatorOptions {
  /** How long an issued access token is accepted, in seconds (default 3600, Google's). */
  tokenLifetimeSeconds?: number;
  /** The Google Cloud project of the emulator's service account (default `emulated-project`). */
  project?: string;
}

/** A service account's JSON key file, as Google's console downloads it. */
export interface ServiceAccountKey {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

/** An OAuth error in Google's token endpoint's shape (RFC 6749). */
export interface TokenError {
  status: number;
  body: { error: string; error_description: string };
}

export class VertexTokens {
  readonly project: string;
  /** Access tokens issued so far (a test counts refreshes with it). */
  issued = 0;
  private lifetimeSeconds: number;
  private readonly accounts = new Map<string, KeyObject>();
  private readonly tokens = new Map<string, number>();

  constructor(options: VertexEmulatorOptions = {}) {
    this.project = options.project ?? 'emulated-project';
    this.lifetimeSeconds = options.tokenLifetimeSeconds ?? 3600;
  }

  /** Tokens issued from now on live this long. */
  setTokenLifetime(seconds: number): void {
    this.lifetimeSeconds = seconds;
  }

  /**
   * A new service account the token endpoint trusts, as its JSON key file, its `token_uri` the
   * emulator's token endpoint (`{baseUrl}/token`).
   */
  serviceAccount(baseUrl: string, name = 'gateway'): ServiceAccountKey {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = `${name}-${randomBytes(3).toString('hex')}@${this.project}.iam.gserviceaccount.com`;
    this.accounts.set(email, publicKey);
    return {
      type: 'service_account',
      project_id: this.project,
      private_key_id: randomBytes(20).toString('hex'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: email,
      client_id: String(100_000_000_000_000_000_000n + BigInt(this.accounts.size)),
      token_uri: `${baseUrl}/token`,
    };
  }

  /** Trusts an account whose key the test made itself (its public key as PEM). */
  trust(email: string, publicKeyPem: string): void {
    this.accounts.set(email, createPublicKey(publicKeyPem));
  }

  /** The token answer for a token request's form, or Google's OAuth error. */
  exchange(form: Record<string, unknown>, tokenUrl: string, now = Date.now()): { access_token: string; expires_in: number; token_type: 'Bearer' } | TokenError {
    if (form.grant_type !== JWT_BEARER_GRANT) return tokenError(400, 'unsupported_grant_type', `Invalid grant_type: ${String(form.grant_type ?? '')}`);
    if (typeof form.assertion !== 'string') return tokenError(400, 'invalid_request', 'Missing required parameter: assertion');
    const problem = this.assertionProblem(form.assertion, tokenUrl, Math.floor(now / 1000));
    if (problem !== undefined) return problem;
    const token = `ya29.emulated-${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, now + this.lifetimeSeconds * 1000);
    this.issued++;
    return { access_token: token, expires_in: this.lifetimeSeconds, token_type: 'Bearer' };
  }

  /** Whether a bearer token is one this endpoint issued and has not expired. */
  accepts(token: string | undefined, now = Date.now()): 'ok' | 'missing' | 'invalid' | 'expired' {
    if (token === undefined || token === '') return 'missing';
    const expiresAt = this.tokens.get(token);
    if (expiresAt === undefined) return 'invalid';
    return expiresAt > now ? 'ok' : 'expired';
  }

  /** Why the assertion is refused; undefined when it is a valid grant. */
  private assertionProblem(assertion: string, tokenUrl: string, nowSeconds: number): TokenError | undefined {
    const parts = assertion.split('.');
    if (parts.length !== 3) return tokenError(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe');
    const header = decodeSegment(parts[0]);
    const claims = decodeSegment(parts[1]);
    if (header === undefined || claims === undefined) return tokenError(400, 'invalid_grant', 'Invalid JWT: the header or the claims are not base64url JSON');
    if (header.alg !== 'RS256') return tokenError(400, 'invalid_grant', 'Invalid JWT: the signing algorithm must be RS256');
    const key = typeof claims.iss === 'string' ? this.accounts.get(claims.iss) : undefined;
    if (key === undefined) return tokenError(400, 'invalid_grant', 'Invalid grant: account not found');
    const signed = verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url'));
    if (!signed) return tokenError(400, 'invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== GOOGLE_TOKEN_AUDIENCE && claims.aud !== tokenUrl) return tokenError(400, 'invalid_grant', `Invalid JWT: aud must be ${GOOGLE_TOKEN_AUDIENCE}`);
    const iat = claims.iat;
    const exp = claims.exp;
    if (typeof iat !== 'number' || typeof exp !== 'number' || iat > nowSeconds + SKEW_SECONDS || exp <= nowSeconds || exp - iat > MAX_ASSERTION_SECONDS) {
      return tokenError(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return tokenError(400, 'invalid_scope', `Vertex AI needs the ${CLOUD_PLATFORM_SCOPE} scope.`);
    return undefined;
  }
}

function tokenError(status: number, error: string, description: string): TokenError {
  return { status, body: { error, error_description: description } };
}

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
