import type { CatalogueModel } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { assertDimensions, assertWithinContext, defaultDimensions, embeddingSources, inputList } from './embeddings-request';
import { encodeEmbedding, toBase64Float32 } from './embedding-encoding';

const model = (overrides: Partial<CatalogueModel> = {}): CatalogueModel => ({
  id: 'openai/text-embedding-3-small',
  aliases: ['text-embedding-3-small'],
  type: 'openai/embeddings',
  info: { name: 'small', developer: 'OpenAI', description: '', contextLength: 20 },
  tags: ['playground:embeddings', 'dimensions:1536'],
  routing: { sources: [{ provider: 'openai', model: 'text-embedding-3-small' }] },
  ...overrides,
});

function failure(run: () => unknown): { status: number; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayException);
    return { status: (error as GatewayException).getStatus(), message: (error as GatewayException).message };
  }
  throw new Error('expected a GatewayException');
}

describe('embeddings request rules', () => {
  it('reads the default vector length from the dimensions tag and lets dimensions only shorten it', () => {
    expect(defaultDimensions(model())).toBe(1536);
    expect(defaultDimensions(model({ tags: [] }))).toBeUndefined();
    expect(() => assertDimensions(model(), 1536)).not.toThrow();
    expect(() => assertDimensions(model(), undefined)).not.toThrow();
    expect(() => assertDimensions(model({ tags: [] }), 100_000)).not.toThrow();
    expect(failure(() => assertDimensions(model(), 1537))).toEqual({
      status: 400,
      message: 'Body validation error! dimensions: Expected an integer from 1 to 1536 for openai/text-embedding-3-small (its vector length). Received 1537',
    });
  });

  it('lists the inputs: a string, strings, one token array, token arrays', () => {
    expect(inputList('a')).toEqual(['a']);
    expect(inputList(['a', 'b'])).toEqual(['a', 'b']);
    expect(inputList([1, 2])).toEqual([[1, 2]]);
    expect(inputList([[1], [2]])).toEqual([[1], [2]]);
  });

  it('refuses an input over the context, naming it', () => {
    expect(() => assertWithinContext(model(), ['short text', Array.from({ length: 20 }, () => 1)])).not.toThrow();
    // Over 20 bytes but few tokens: tokenized, and accepted.
    expect(() => assertWithinContext(model(), ['internationalization internationalization'])).not.toThrow();
    expect(failure(() => assertWithinContext(model(), ['one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone'])).message).toMatch(
      /^Body validation error! input: Expected at most 20 tokens per input \(the context of openai\/text-embedding-3-small\)\. Received about 2\d tokens$/,
    );
    expect(failure(() => assertWithinContext(model(), ['ok', Array.from({ length: 21 }, () => 1)])).message).toMatch(/^Body validation error! input\[1\]: Expected at most 20 tokens/);
    expect(() => assertWithinContext(model({ info: { name: 'n', developer: 'd', description: '' } }), ['x'.repeat(100_000)])).not.toThrow();
  });

  it('skips sources without an embeddings API, refusing clearly when none is left', () => {
    const mixed = [
      { provider: 'anthropic', model: 'claude' },
      { provider: 'openai', model: 'e' },
    ];
    expect(embeddingSources(model(), mixed, false)).toEqual([{ provider: 'openai', model: 'e' }]);
    const onlyAnthropic = [{ provider: 'anthropic', model: 'claude' }];
    expect(failure(() => embeddingSources(model(), onlyAnthropic, true))).toEqual({
      status: 400,
      message: 'Body validation error! provider: anthropic offers no embeddings API; pick another source of openai/text-embedding-3-small.',
    });
    expect(failure(() => embeddingSources(model(), onlyAnthropic, false))).toMatchObject({ status: 503, message: expect.stringMatching(/anthropic has no embeddings API/) });
    // An unknown provider stays for the route planner to name.
    expect(embeddingSources(model(), [{ provider: 'nobody', model: 'x' }], false)).toEqual([{ provider: 'nobody', model: 'x' }]);
  });
});

describe('embedding encoding', () => {
  it('encodes base64 as little-endian float32, exactly what the OpenAI SDK decodes', () => {
    const vector = [0.5, -0.25, 1, 0.1];
    const encoded = toBase64Float32(vector);
    const bytes = Buffer.from(encoded, 'base64');
    expect(bytes.toString('hex').slice(0, 24)).toBe('0000003f000080be0000803f');
    // The SDK's own decoding: a Float32Array over the bytes.
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    expect(decoded).toEqual(vector.map((value) => Math.fround(value)));
  });

  it('keeps floats by default', () => {
    expect(encodeEmbedding([0.1, 0.2], undefined)).toEqual([0.1, 0.2]);
    expect(encodeEmbedding([0.1, 0.2], 'float')).toEqual([0.1, 0.2]);
    expect(encodeEmbedding([0.5], 'base64')).toBe('AAAAPw==');
  });
});
