import { wellFormedClientRequestId } from './request-context';

describe('wellFormedClientRequestId', () => {
  it('keeps printable ASCII of 1 to 128 characters and ignores anything else', () => {
    expect(wellFormedClientRequestId('checkout-7f3a 42')).toBe('checkout-7f3a 42');
    expect(wellFormedClientRequestId('~'.repeat(128))).toBe('~'.repeat(128));
    for (const ignored of [undefined, '', 'x'.repeat(129), 'naïve', 'line\nbreak', 'tab\there', ['a', 'b']]) {
      expect(wellFormedClientRequestId(ignored)).toBeUndefined();
    }
  });
});
