import type { Request } from 'express';
import { CONSOLE_SESSION_MS, ConsoleSessions } from './console-sessions';

const TOKEN = 'admin-token-of-sixteen-chars-or-more';
const request = (cookie: string | undefined, method = 'GET', headers: Record<string, string> = {}): Request =>
  ({ method, secure: false, headers: { host: 'billing.local:8081', ...(cookie === undefined ? {} : { cookie: `other=1; igw_console_session=${cookie}` }), ...headers } }) as unknown as Request;

describe('ConsoleSessions', () => {
  it('verifies its own sessions until they expire, and no other', () => {
    const sessions = new ConsoleSessions(TOKEN);
    const now = 1_800_000_000_000;
    const value = sessions.issue(now);
    expect(sessions.verify(value, now + CONSOLE_SESSION_MS - 1)).not.toBeNull();
    expect(sessions.verify(value, now + CONSOLE_SESSION_MS)).toBeNull();
    // Another admin token signs with another key: rotating ADMIN_TOKEN ends every session.
    expect(new ConsoleSessions(`${TOKEN}-rotated`).verify(value, now)).toBeNull();
    // Two sessions never share an id.
    expect(sessions.issue(now)).not.toBe(value);
  });

  it('refuses altered claims, signatures and shapes', () => {
    const sessions = new ConsoleSessions(TOKEN);
    const value = sessions.issue();
    const [payload, signature] = value.split('.') as [string, string];
    const longer = Buffer.from(JSON.stringify({ sid: 'a', exp: Number.MAX_SAFE_INTEGER })).toString('base64url');
    for (const bad of [`${longer}.${signature}`, `${payload}.${signature}x`, `${payload}.`, `.${signature}`, `${value}.${signature}`, '', 'x'.repeat(1000), undefined]) {
      expect(sessions.verify(bad)).toBeNull();
    }
  });

  it('ends a session on logout', () => {
    const sessions = new ConsoleSessions(TOKEN);
    const value = sessions.issue();
    const other = sessions.issue();
    sessions.end(value);
    expect(sessions.verify(value)).toBeNull();
    expect(sessions.verify(other)).not.toBeNull();
  });

  it('lets reads in on the cookie alone; writes need the console header and the own origin', () => {
    const sessions = new ConsoleSessions(TOKEN);
    const value = sessions.issue();
    expect(sessions.authenticates(request(value))).toBe(true);
    expect(sessions.authenticates(request(undefined))).toBe(false);
    expect(sessions.authenticates(request('forged.value', 'POST'))).toBe(false);
    expect(() => sessions.authenticates(request(value, 'POST'))).toThrow(/x-igw-console/);
    expect(() => sessions.authenticates(request(value, 'DELETE', { 'x-igw-console': '1', origin: 'https://evil.example' }))).toThrow(/own origin/);
    expect(sessions.authenticates(request(value, 'PATCH', { 'x-igw-console': '1', origin: 'http://billing.local:8081' }))).toBe(true);
    expect(sessions.authenticates(request(value, 'POST', { 'x-igw-console': '1' }))).toBe(true);
  });
});
