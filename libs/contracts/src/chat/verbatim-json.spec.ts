import { ChatCompletionRequestDto } from './chat-completion-request.dto';
import { acceptDto } from '@igw/validation';
import { encodeJson, JsonSource, keysIfSameJson } from '@igw/json';

/** A conversation long enough for its text to be kept (over 16 KB). */
const turns = (count = 200) => Array.from({ length: count }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `turn ${index} `.repeat(12) }));

/** A client's body as sent (its exact text), what the gateway parses and validates of it, and the upstream body it then writes. */
function forwarded(text: string, change?: (messages: Array<Record<string, unknown>>) => void): { sent: string; written: string | Buffer } {
  const bytes = Buffer.from(text);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const body = acceptDto(ChatCompletionRequestDto, JSON.parse(JSON.stringify(parsed)))!;
  const source = JsonSource.ofMember({ text, bytes, parsed }, 'messages');
  change?.(body.messages as unknown as Array<Record<string, unknown>>);
  const upstream = { model: 'gpt-4o-mini', messages: body.messages, stream: false };
  return { sent: JSON.stringify(upstream), written: encodeJson(upstream, source && { messages: source }) };
}

const asText = (written: string | Buffer) => (typeof written === 'string' ? written : written.toString('utf8'));

describe('encodeJson with the source of a member', () => {
  it("writes the client's own text of a long conversation, which parses to what JSON.stringify writes", () => {
    // Spaced out and with escapes JSON.stringify would not write: the client's text shows through.
    const text = JSON.stringify({ model: 'mini', messages: turns() }, null, 1).replace('"turn 0', '"\\u0074urn 0');
    const { sent, written } = forwarded(text);
    expect(Buffer.isBuffer(written)).toBe(true);
    expect(JSON.parse(asText(written))).toEqual(JSON.parse(sent));
    expect(asText(written)).toContain('"\\u0074urn 0');
    expect(asText(written)).toContain('\n  {\n   "role": "user"');
  });

  it('keeps text in any script, and what a malformed UTF-8 byte decoded to', () => {
    const messages = [...turns(), { role: 'user', content: 'déjà vu, 日本語, 🙂 and \ud800 alone' }];
    const text = JSON.stringify({ model: 'mini', messages });
    // The byte 0xff, never valid in UTF-8, inside the first message's text (all ASCII before it).
    const inText = text.indexOf('turn 0');
    for (const bytes of [Buffer.from(text), Buffer.concat([Buffer.from(text.slice(0, inText)), Buffer.from([0xff]), Buffer.from(text.slice(inText))])]) {
      const decoded = bytes.toString('utf8');
      const parsed = JSON.parse(decoded) as Record<string, unknown>;
      const body = acceptDto(ChatCompletionRequestDto, JSON.parse(JSON.stringify(parsed)))!;
      const source = JsonSource.ofMember({ text: decoded, bytes, parsed }, 'messages')!;
      const upstream = { model: 'gpt-4o-mini', messages: body.messages };
      const written = encodeJson(upstream, { messages: source });
      expect(Buffer.isBuffer(written)).toBe(true);
      expect(JSON.parse(asText(written))).toEqual(JSON.parse(JSON.stringify(upstream)));
      expect(asText(written)).toContain(decoded.includes('\ufffd') ? '"\ufffdturn 0' : '"turn 0');
    }
  });

  it('writes a message whose key the client wrote twice as JSON.parse read it, never the first value', () => {
    const text = JSON.stringify({ model: 'mini', messages: turns() }).replace('{"role":"user","content":"turn 0', '{"role":"user","content":"hidden from the gateway","content":"turn 0');
    const { sent, written } = forwarded(text);
    expect(asText(written)).toBe(sent);
    expect(asText(written)).not.toContain('hidden from the gateway');
  });

  it('drops a field the gateway does not forward, as JSON.stringify of its own copy does', () => {
    const text = JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: 'hi', not_a_field: 'x' }, ...turns()] });
    const { sent, written } = forwarded(text);
    expect(asText(written)).toBe(sent);
    expect(sent).not.toContain('not_a_field');
  });

  it.each([
    ['a message replaced', (messages: Array<Record<string, unknown>>) => (messages[3] = { role: 'user', content: 'changed' })],
    ['a message added', (messages: Array<Record<string, unknown>>) => messages.push({ role: 'user', content: 'more' })],
    ['a content changed in place', (messages: Array<Record<string, unknown>>) => (messages[0].content = 'changed')],
    ['a field set', (messages: Array<Record<string, unknown>>) => (messages[0].name = 'someone')],
    ['a field removed', (messages: Array<Record<string, unknown>>) => delete messages[0].content],
  ])('serializes the messages again once they were changed after they were kept: %s', (_case, change) => {
    const { sent, written } = forwarded(JSON.stringify({ model: 'mini', messages: turns() }), change);
    expect(asText(written)).toBe(sent);
  });

  it('keeps no source of a short conversation, which is serialized as JSON.stringify does', () => {
    const text = JSON.stringify({ model: 'mini', messages: turns(4) }, null, 2);
    expect(JsonSource.ofMember({ text, bytes: Buffer.from(text), parsed: JSON.parse(text) }, 'messages')).toBeUndefined();
    const { sent, written } = forwarded(text);
    expect(written).toBe(sent);
  });

  it('writes the source only as the member it was given for, in the body it was given', () => {
    const text = JSON.stringify({ model: 'mini', messages: turns() });
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const body = acceptDto(ChatCompletionRequestDto, JSON.parse(JSON.stringify(parsed)))!;
    const sources = { messages: JsonSource.ofMember({ text, bytes: Buffer.from(text), parsed }, 'messages')! };
    expect(Buffer.isBuffer(encodeJson({ messages: body.messages }, sources))).toBe(true);
    expect(JSON.parse(asText(encodeJson({ messages: body.messages }, sources)))).toEqual({ messages: parsed.messages });
    expect(JSON.parse(asText(encodeJson({ a: 1, messages: body.messages, b: [2] }, sources)))).toEqual({ a: 1, b: [2], messages: parsed.messages });
    // Under another key, with no source given, or in no object: serialized.
    expect(encodeJson({ history: body.messages }, sources)).toBe(JSON.stringify({ history: body.messages }));
    expect(encodeJson({ messages: body.messages })).toBe(JSON.stringify({ messages: body.messages }));
    expect(encodeJson([body.messages], sources)).toBe(JSON.stringify([body.messages]));
  });
});

describe('keysIfSameJson', () => {
  it.each([
    ['a string', 'x', 'x', 0],
    ['equal objects in another key order', { a: 1, b: [true, null, 'x'] }, { b: [true, null, 'x'], a: 1 }, 2],
    ['members JSON.stringify leaves out', { a: 1, b: undefined, c: () => 1 }, { a: 1 }, 1],
    ['a member missing', { a: 1 }, { a: 1, b: 2 }, -1],
    ['a member more', { a: 1, b: 2 }, { a: 1 }, -1],
    ['another value', { a: { b: 'x' } }, { a: { b: 'y' } }, -1],
    ['an array for an object', { a: [] }, { a: {} }, -1],
    ['undefined in an array (written as null)', { a: [undefined] }, { a: [null] }, -1],
    ['a value with toJSON', { a: new Date(0) }, { a: '1970-01-01T00:00:00.000Z' }, -1],
    ['an inherited member', Object.create({ a: 1 }) as object, { a: 1 }, -1],
  ])('%s', (_case, value, parsed, keys) => {
    expect(keysIfSameJson(value, parsed)).toBe(keys);
  });

  it('counts an object shared with the parse as a difference: a change to it would change both', () => {
    const parsed = { a: { b: 1 } };
    expect(keysIfSameJson({ a: parsed.a }, parsed)).toBe(-1);
    expect(keysIfSameJson(parsed, parsed)).toBe(-1);
    expect(keysIfSameJson({ a: { b: 1 } }, parsed)).toBe(2);
  });
});
