import { generateApiKey } from './api-key';
import { redactSecrets, registerLogSecrets } from '@igw/observability';

describe('redactSecrets', () => {
  it('replaces registered secrets, API keys past their prefix and bearer credentials, and leaves the rest', () => {
    registerLogSecrets(['admin-token-0123456789', 'sk-provider-abcdef', 'short', undefined]);
    const { key, prefix } = generateApiKey();
    const line = `upstream said "invalid key sk-provider-abcdef"; admin admin-token-0123456789; client ${key}; header Authorization: Bearer abc.def; short words stay`;
    const redacted = redactSecrets(line);
    expect(redacted).toBe(
      `upstream said "invalid key [REDACTED]"; admin [REDACTED]; client ${prefix}[REDACTED]; header Authorization: Bearer [REDACTED]; short words stay`,
    );
    expect(redacted).not.toContain(key);
  });

  it('replaces a key in a query string (Google clients send ?key=), whatever it looks like', () => {
    expect(redactSecrets('POST /v1beta/models/m:generateContent?alt=sse&key=not-igw-shaped-secret failed')).toBe('POST /v1beta/models/m:generateContent?alt=sse&key=[REDACTED] failed');
    expect(redactSecrets('GET /x?KEY=abc&monkey=banana')).toBe('GET /x?KEY=[REDACTED]&monkey=banana');
  });
});
