import { packJson, STORED_RESPONSE_ID, unpackJson } from './stored-responses';

describe('packed conversations', () => {
  it('carry JSON deflated, exactly, and much smaller than its text', async () => {
    const value = { input: Array.from({ length: 200 }, (_, index) => ({ id: `msg_${index}`, type: 'message', role: 'user', content: `turn ${index} with "quotes" and ünïcödé ✓` })) };
    const packed = await packJson(value);
    expect(await unpackJson(packed, 1_000_000)).toEqual(value);
    expect(packed.deflated.length).toBeLessThan(JSON.stringify(value).length / 4);
  });

  it('refuse to inflate past their bound, or what is not deflated JSON', async () => {
    const packed = await packJson({ text: 'x'.repeat(100_000) });
    await expect(unpackJson(packed, 10_000)).rejects.toThrow();
    await expect(unpackJson({ deflated: Buffer.from('not deflated').toString('base64') }, 10_000)).rejects.toThrow();
  });
});

describe('stored response ids', () => {
  it.each([
    ['resp_0123456789abcdef0123456789abcdef', true],
    ['resp_0123456789ABCDEF0123456789abcdef', false],
    ['resp_123', false],
    ['resp_0123456789abcdef0123456789abcdef0', false],
    ["resp_' OR 1=1 --", false],
  ])('%s: %s', (id, ours) => expect(STORED_RESPONSE_ID.test(id)).toBe(ours));
});
