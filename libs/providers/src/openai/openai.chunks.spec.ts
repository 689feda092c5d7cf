// Reading an OpenAI stream's chunks: those read by their shape (the text around their content)
// must be exactly the chunks JSON.parse gives, and anything else must be parsed in full.
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { OpenAiChunkReader } from './openai.chat';

const envelope = (content: string, extra = '') =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini"${extra},"choices":[{"index":0,"delta":{"content":${content}},"logprobs":null,"finish_reason":null}],"usage":null}`;

function readAll(texts: string[]) {
  const reader = new OpenAiChunkReader('openai', false);
  return texts.map((text) => reader.read(text));
}

describe('OpenAiChunkReader', () => {
  it('reads every chunk as JSON.parse does, whatever its content string holds', () => {
    const contents = ['"Hello"', '" world"', '""', '"say \\"hi\\""', '"tab\\tand\\nline"', '"\\u00e9t\\u00e9 \\ud83d\\udc4b"', '"back\\\\"', '"é 👋"', '"}],\\"usage\\":{}"'];
    const texts = [
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}',
      ...contents.map((content) => envelope(content)),
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}',
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9,"total_tokens":12}}',
    ];
    expect(readAll(texts)).toEqual(texts.map((text) => JSON.parse(text)));
  });

  it('gives each chunk objects of its own', () => {
    const [first, second, third] = readAll([envelope('"a"'), envelope('"b"'), envelope('"c"')]);
    second.model = 'renamed';
    second.choices[0].delta.content = 'changed';
    expect(third).toEqual(JSON.parse(envelope('"c"')));
    expect(first).toEqual(JSON.parse(envelope('"a"')));
    expect(third.choices).not.toBe(first.choices);
  });

  it('parses in full a chunk whose text differs around its content', () => {
    const texts = [envelope('"a"'), envelope('"b"', ',"obfuscation":"xyz"'), envelope('"c"', ',"system_fingerprint":"fp"'), envelope('"d"')];
    expect(readAll(texts)).toEqual(texts.map((text) => JSON.parse(text)));
  });

  it('refuses a content that is not one JSON string, as JSON.parse would', () => {
    for (const bad of ['"a\u0001b"', '"a"b"', '"a\\"', '"\\x41"', '"a', 'a"']) {
      const reader = new OpenAiChunkReader('openai', false);
      reader.read(envelope('"a"'));
      expect(() => reader.read(envelope(bad))).toThrow(UpstreamProtocolError);
    }
  });

  it('parses in full a content that is valid JSON but no plain string', () => {
    const texts = [envelope('"a"'), envelope('"b" '), envelope('1'), envelope('null'), envelope('"c"')];
    expect(readAll(texts)).toEqual(texts.map((text) => JSON.parse(text)));
  });

  it('still sees an error event after chunks of a shape', () => {
    const reader = new OpenAiChunkReader('openai', false);
    reader.read(envelope('"a"'));
    expect(() => reader.read('{"error":{"message":"overloaded"}}')).toThrow(UpstreamHttpError);
  });

  it('takes no shape from a chunk with nested values it would have to share', () => {
    const withLogprobs = (content: string) =>
      `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${content}},"logprobs":{"content":[]},"finish_reason":null}]}`;
    const [first, second] = readAll([withLogprobs('"a"'), withLogprobs('"b"')]);
    expect(second).toEqual(JSON.parse(withLogprobs('"b"')));
    expect(second.choices[0].logprobs).not.toBe(first.choices[0].logprobs);
  });
});
