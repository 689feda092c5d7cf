import { generateApiKey } from '../auth/api-key';
import { redactSecrets, registerLogSecrets } from './secrets';

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
});
