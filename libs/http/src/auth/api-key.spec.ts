import { generateApiKey, isWellFormedApiKey } from './api-key';

describe('isWellFormedApiKey', () => {
  it('accepts every key generateApiKey makes', () => {
    for (let i = 0; i < 2_000; i++) expect(isWellFormedApiKey(generateApiKey().key)).toBe(true);
  });

  const real = generateApiKey().key;
  it.each([
    ['empty', ''],
    ['no prefix', real.slice(4)],
    ['another prefix', `sk-_${real.slice(4)}`],
    ['upper-case prefix', `IGW_${real.slice(4)}`],
    ['one character short', real.slice(0, -1)],
    ['one character long', `${real}A`],
    ['standard base64 characters', `igw_${'+'.repeat(42)}A`],
    ['padding', `igw_${'A'.repeat(42)}=`],
    ['a space inside', `igw_${'A'.repeat(20)} ${'A'.repeat(21)}A`],
    ['non-ASCII', `igw_${'é'.repeat(42)}A`],
    ['a last character no 32-byte key ends with', `igw_${'A'.repeat(42)}B`],
    ['the old test fixtures', 'igw_not-a-real-key'],
  ])('refuses %s', (_name, key) => {
    expect(isWellFormedApiKey(key)).toBe(false);
  });
});
