import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ADMIN_TOKEN, GatewayException, type AdminSessionVerifier } from '@igw/http';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

export const CONSOLE_SESSION_COOKIE = 'igw_console_session';
/** The header every console request that changes data carries: a page of another site cannot send it without CORS consent, which billing never gives. */
export const CONSOLE_REQUEST_HEADER = 'x-igw-console';
/** A session lasts a working day; signing in again is one form. */
export const CONSOLE_SESSION_MS = 8 * 3600 * 1000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface SessionClaims {
  /** Random id: names the session for logout. */
  sid: string;
  /** Expiry, ms since the epoch. */
  exp: number;
}

/**
 * Console sessions: a cookie holding random claims signed with a key derived from ADMIN_TOKEN,
 * so every billing replica verifies it without shared state, and changing ADMIN_TOKEN ends
 * every session. The token itself never reaches the browser after the login form.
 */
@Injectable()
export class ConsoleSessions implements AdminSessionVerifier {
  private readonly signingKey: Buffer;
  /** Sessions logged out on this replica, until they would have expired anyway. */
  private readonly loggedOut = new Map<string, number>();

  constructor(@Inject(ADMIN_TOKEN) adminToken: string) {
    this.signingKey = createHmac('sha256', adminToken).update('igw console session v1').digest();
  }

  /** A new session's cookie value. */
  issue(now = Date.now()): string {
    const claims: SessionClaims = { sid: randomBytes(16).toString('base64url'), exp: now + CONSOLE_SESSION_MS };
    const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The claims of a well-signed, unexpired session that was not logged out, else null. */
  verify(value: string | undefined, now = Date.now()): SessionClaims | null {
    if (!value || value.length > 512) return null;
    const [payload, signature, ...rest] = value.split('.');
    if (!payload || !signature || rest.length > 0) return null;
    const expected = Buffer.from(this.sign(payload), 'utf8');
    const presented = Buffer.from(signature, 'utf8');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!isClaims(claims) || claims.exp <= now || this.loggedOut.has(claims.sid)) return null;
    return claims;
  }

  /** Ends the session on this replica (the browser's cookie is cleared by the caller). */
  end(value: string | undefined, now = Date.now()): void {
    const claims = this.verify(value, now);
    for (const [sid, exp] of this.loggedOut) if (exp <= now) this.loggedOut.delete(sid);
    if (claims) this.loggedOut.set(claims.sid, claims.exp);
  }

  /**
   * The admin guard's second way in. A session only counts for reads on its own; a write must
   * also carry the console header and, when the browser names one, come from billing's own
   * origin: SameSite=Strict already keeps other sites' requests cookie-less, this holds even
   * where a browser or a proxy does not honour it.
   */
  authenticates(request: Request): boolean {
    if (!this.verify(readCookie(request, CONSOLE_SESSION_COOKIE))) return false;
    if (SAFE_METHODS.has(request.method.toUpperCase())) return true;
    assertSameOriginWrite(request);
    return true;
  }

  setCookie(request: Request, response: Response, value: string): void {
    response.append('Set-Cookie', `${CONSOLE_SESSION_COOKIE}=${value}; ${cookieAttributes(request)}; Max-Age=${Math.floor(CONSOLE_SESSION_MS / 1000)}`);
  }

  clearCookie(request: Request, response: Response): void {
    response.append('Set-Cookie', `${CONSOLE_SESSION_COOKIE}=; ${cookieAttributes(request)}; Max-Age=0`);
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.signingKey).update(payload).digest('base64url');
  }
}

/** Refuses a write that lacks the console header or whose Origin is another site's. */
export function assertSameOriginWrite(request: Request): void {
  if (request.headers[CONSOLE_REQUEST_HEADER] !== '1') {
    throw new GatewayException(HttpStatus.FORBIDDEN, `Forbidden: a console request that changes data must carry the header ${CONSOLE_REQUEST_HEADER}: 1.`);
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== ownOrigin(request)) {
    throw new GatewayException(HttpStatus.FORBIDDEN, `Forbidden: a console request that changes data must come from the console's own origin, not ${origin}.`);
  }
}

function ownOrigin(request: Request): string {
  return `${isHttps(request) ? 'https' : 'http'}://${request.headers.host ?? ''}`;
}

/** Behind a TLS-terminating proxy the request arrives as http; its X-Forwarded-Proto says https. */
function isHttps(request: Request): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return request.secure || proto === 'https';
}

function cookieAttributes(request: Request): string {
  return `Path=/; HttpOnly; SameSite=Strict${isHttps(request) ? '; Secure' : ''}`;
}

export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

function isClaims(value: unknown): value is SessionClaims {
  if (typeof value !== 'object' || value === null) return false;
  const { sid, exp } = value as Record<string, unknown>;
  return typeof sid === 'string' && sid.length > 0 && typeof exp === 'number' && Number.isFinite(exp);
}
