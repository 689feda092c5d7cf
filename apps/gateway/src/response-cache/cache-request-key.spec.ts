import type { CatalogueModel } from '@igw/contracts';
import { canonicalJson, requestCacheHash } from './cache-request-key';

const model = (price = 1): CatalogueModel => ({
  id: 'openai/gpt-4o-mini',
  aliases: [],
  type: 'chat',
  info: { name: 'GPT-4o mini', developer: 'OpenAI', description: '' },
  tags: [],
  pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price, per: 1_000_000 }] },
  routing: { sources: [{ provider: 'openai', model: 'gpt-4o-mini' }] },
});

const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2 };

describe('canonicalJson', () => {
  it('sorts members at every depth, leaves undefined members out and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined, x: null }], c: 'é' } })).toBe('{"a":{"c":"é","d":[3,{"x":null,"z":1}]},"b":1}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  it('reads class instances as their members, and survives nesting far deeper than any body', () => {
    class Message {
      constructor(readonly role: string, readonly content: string) {}
    }
    expect(canonicalJson([new Message('user', 'x')])).toBe('[{"content":"x","role":"user"}]');
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 100_000; depth++) deep = [deep];
    expect(canonicalJson(deep)).toHaveLength(200_006);
  });
});

describe('requestCacheHash', () => {
  const entry = model();

  it('is the same for the same request however its members are ordered or delivered', () => {
    const reordered = { temperature: 0.2, messages: [{ content: 'Hi', role: 'user' }], model: 'an alias', stream: true, stream_options: { include_usage: true }, user: 'someone' };
    expect(requestCacheHash('chat.completions', entry, reordered)).toBe(requestCacheHash('chat.completions', entry, body));
  });

  it('differs with anything that can change the answer', () => {
    const base = requestCacheHash('chat.completions', entry, body);
    expect(requestCacheHash('chat.completions', entry, { ...body, temperature: 0.3 })).not.toBe(base);
    expect(requestCacheHash('chat.completions', entry, { ...body, tools: [{ type: 'function', function: { name: 'f' } }] })).not.toBe(base);
    expect(requestCacheHash('chat.completions', entry, { ...body, seed: 1 })).not.toBe(base);
    expect(requestCacheHash('messages', entry, body)).not.toBe(base);
    expect(requestCacheHash('chat.completions', model(2), body)).not.toBe(base);
  });
});
