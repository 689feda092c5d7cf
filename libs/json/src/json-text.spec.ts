import { topLevelMember } from './json-text';

/** What a span holds, parsed, and the keys JSON.parse gives it at every depth. */
function keysOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + keysOf(item), 0);
  if (typeof value === 'object' && value !== null) return Object.values(value).reduce((sum: number, item) => sum + 1 + keysOf(item), 0);
  return 0;
}

/** A random JSON value with strings full of the characters a scanner could trip on. */
function randomValue(random: () => number, depth: number): unknown {
  const pick = random();
  const text = () => Array.from({ length: Math.floor(random() * 8) }, () => ['a', '"', '\\', '{', '}', '[', ']', ':', ',', ' ', 'é', '\n'][Math.floor(random() * 12)]).join('');
  if (depth > 3 || pick < 0.3) return text();
  if (pick < 0.4) return Math.floor(random() * 1e6) / 100;
  if (pick < 0.45) return [true, false, null][Math.floor(random() * 3)];
  if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, (_, index) => [`${text()}${index}`, randomValue(random, depth + 1)]));
}

describe('topLevelMember', () => {
  it('finds each top-level member of random JSON, written compactly or spaced out, and counts the keys inside', () => {
    let state = 7;
    const random = () => (state = (state * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x7fffffff;
    for (let round = 0; round < 2_000; round++) {
      const body = { first: randomValue(random, 0), messages: randomValue(random, 0), 'x: {y}': randomValue(random, 0), last: randomValue(random, 0) };
      for (const text of [JSON.stringify(body), JSON.stringify(body, null, round % 2 ? 2 : '\t')]) {
        const span = topLevelMember(text, 'messages')!;
        expect(JSON.parse(text.slice(span.start, span.end))).toEqual(body.messages);
        expect(span.keys).toBe(keysOf(body.messages));
        expect(text.slice(span.end).trim().startsWith(',')).toBe(true);
      }
    }
  });

  it('counts a key written twice as two, where JSON.parse keeps one', () => {
    const text = '{"messages":[{"role":"user","content":"a","content":"b"}]}';
    expect(topLevelMember(text, 'messages')).toEqual({ start: 12, end: text.length - 1, keys: 3 });
    expect(keysOf(JSON.parse(text).messages)).toBe(2);
  });

  it.each([
    ['the member written twice', '{"messages":[1],"messages":[2]}'],
    ['a key with an escape, which may spell the member', '{"m\\u0065ssages":[1],"messages":[2]}'],
    ['an escaped key elsewhere', '{"messages":[2],"a\\"b":1}'],
    ['no such member', '{"message":[1]}'],
    ['a member only deeper down', '{"body":{"messages":[1]}}'],
    ['an array', '[{"messages":[1]}]'],
    ['a string', '"messages"'],
    ['a string left open', '{"messages":["abc'],
    ['an object left open', '{"messages":[{"a":1}'],
  ])('gives no span for %s', (_case, text) => {
    expect(topLevelMember(text, 'messages')).toBeUndefined();
  });

  it('reads 100,000 top-level keys and a megabyte of backslashes in linear time', () => {
    const manyKeys = `{${Array.from({ length: 100_000 }, (_, index) => `"k${index}":${index}`).join(',')},"messages":[]}`;
    expect(topLevelMember(manyKeys, 'messages')).toEqual({ start: manyKeys.length - 3, end: manyKeys.length - 1, keys: 0 });
    const backslashes = `{"messages":["${'\\\\'.repeat(500_000)}","\\""]}`;
    expect(topLevelMember(backslashes, 'messages')?.end).toBe(backslashes.length - 1);
  });
});
