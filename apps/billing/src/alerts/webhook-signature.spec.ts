import { createHmac } from 'node:crypto';
import { signatureHeader, verifySignature } from './webhook-signature';

describe('webhook signatures', () => {
  const secret = 'whsec-test-0123456789abcdef';
  const body = '{"id":"e1","type":"balance.below_threshold","data":{"balance":"1.5"}}';

  it('signs "<t>.<body>" with HMAC-SHA256 in hex, as a receiver recomputes it with any HMAC library', () => {
    const header = signatureHeader(secret, body, 1_795_000_000);
    const expected = createHmac('sha256', secret).update(`1795000000.${body}`).digest('hex');
    expect(header).toBe(`t=1795000000,v1=${expected}`);
  });

  it('verifies its own signature within the tolerance', () => {
    const header = signatureHeader(secret, body, 1_000);
    expect(verifySignature(secret, body, header, 1_000)).toBe(true);
    expect(verifySignature(secret, body, header, 1_300)).toBe(true);
    expect(verifySignature(secret, body, header, 1_301)).toBe(false);
  });

  it('refuses another secret, another body, a changed timestamp and malformed headers', () => {
    const header = signatureHeader(secret, body, 1_000);
    expect(verifySignature('another-secret-0123456789', body, header, 1_000)).toBe(false);
    expect(verifySignature(secret, `${body} `, header, 1_000)).toBe(false);
    expect(verifySignature(secret, body, header.replace('t=1000', 't=1001'), 1_000)).toBe(false);
    for (const malformed of ['', 'v1=abc', 't=1000', 't=abc,v1=00', `t=1000,t=1000,${header.split(',')[1]}`, 't=1000,v1=é', `t=1000,v1=${'0'.repeat(64)}`]) {
      expect(verifySignature(secret, body, malformed, 1_000)).toBe(false);
    }
  });

  it('accepts the header when one of several v1 values matches (a receiver during a secret change)', () => {
    const header = signatureHeader(secret, body, 1_000);
    expect(verifySignature(secret, body, `t=1000,v1=${'0'.repeat(64)},${header.split(',')[1]}`, 1_000)).toBe(true);
  });
});
