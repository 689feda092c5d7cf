import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy, ValidateIf } from 'class-validator';
import { isDeepStrictEqual } from 'node:util';
import { acceptDto, IsNumberField, IsObjectField, IsStringField, NestedObject, NullMeansAbsent, referenceValidationPipe } from '@igw/validation';
import { DecisionRequestDto } from './decisions/decision-request.dto';
import { EmbeddingRequestDto } from './embeddings/embedding-request.dto';
import { ImageGenerationRequestDto } from './media/image-generation-request.dto';
import { SpeechRequestDto } from './media/speech-request.dto';

// The compiled acceptance is generic: these classes are made up for the spec. The chat body's
// classes are checked against the pipe on a large corpus in chat-body.differential.spec.ts.

class Inner {
  @IsStringField({ nonEmpty: true })
  name!: string;
}

class Outer {
  @IsNumberField({ integer: true, min: 1 })
  count!: number;

  @IsOptional()
  @NestedObject(() => Inner)
  inner?: Inner;

  @IsOptional()
  @IsObjectField()
  extra?: Record<string, unknown>;

  @NullMeansAbsent()
  @IsOptional()
  @IsStringField()
  note?: string;

  @ValidateIf((outer: Outer) => outer.count > 10)
  @IsStringField({ expected: 'a reason (required past 10)' })
  reason?: string;
}

class WithForeignTransform {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value), { toClassOnly: true })
  @IsStringField()
  name!: string;
}

class WithAsyncRule {
  @ValidateBy({ name: 'later', async: true, validator: { validate: () => Promise.resolve(true) } })
  name!: string;
}

const reference = referenceValidationPipe();

/** The pipe's answer (class-transformer and class-validator), or undefined for a 400. */
async function viaPipe(type: new () => object, body: unknown): Promise<unknown> {
  try {
    return await reference.transform(JSON.parse(JSON.stringify(body)), { type: 'body', metatype: type });
  } catch {
    return undefined;
  }
}

describe('acceptDto', () => {
  it("builds the pipe's instance: nested classes, undeclared fields dropped, free-form values copied, null as absent", async () => {
    const body = { count: 3, inner: { name: 'a', junk: 1 }, extra: { deep: [{ x: 1 }] }, note: null, unknown: { y: 2 } };
    const accepted = acceptDto(Outer, body)!;
    expect(accepted).toBeInstanceOf(Outer);
    expect(accepted.inner).toBeInstanceOf(Inner);
    expect(accepted).toEqual({ count: 3, inner: { name: 'a' }, extra: { deep: [{ x: 1 }] }, note: undefined });
    expect(Object.hasOwn(accepted, 'note')).toBe(true);
    expect(accepted.extra).not.toBe(body.extra);
    expect(isDeepStrictEqual(accepted, await viaPipe(Outer, body))).toBe(true);
  });

  it('refuses what the rules refuse, cross-field conditions included, and leaves it to the pipe', async () => {
    for (const body of [{ count: 0 }, { count: 1, inner: { name: '' } }, { count: 11 }, { count: 1, inner: [] }, { count: 1, extra: 'text' }, {}, [], 'text', null]) {
      expect(acceptDto(Outer, body)).toBeUndefined();
      expect(await viaPipe(Outer, body)).toBeUndefined();
    }
    expect(acceptDto(Outer, { count: 11, reason: 'busy' })).toEqual({ count: 11, reason: 'busy' });
  });

  it('is not sure of keys named like object members, values JSON cannot hold, or very deep free-form values', () => {
    expect(acceptDto(Outer, JSON.parse('{"count": 1, "__proto__": {"x": 1}}'))).toBeUndefined();
    expect(acceptDto(Outer, { count: 1, extra: { constructor: 1 } })).toBeUndefined();
    expect(acceptDto(Outer, { count: 1, extra: { at: undefined } })).toBeUndefined();
    expect(acceptDto(Outer, { count: 1, extra: { at: new Date() } })).toBeUndefined();
    let deep: unknown = 1;
    for (let level = 0; level < 70; level++) deep = { deep };
    expect(acceptDto(Outer, { count: 1, extra: deep })).toBeUndefined();
  });

  it('leaves a class with a transform of its own, or an asynchronous rule, to the pipe', () => {
    expect(acceptDto(WithForeignTransform, { name: ' a ' })).toBeUndefined();
    expect(acceptDto(WithAsyncRule, { name: 'a' })).toBeUndefined();
  });

  it.each([
    ['embeddings', EmbeddingRequestDto, { model: 'text-embedding-3-small', input: ['one', 'two'], dimensions: 256, encoding_format: 'float', user: 'u', provider: null }],
    ['decisions', DecisionRequestDto, { model: 'jev-1.14', state: 'Charged twice', questions: { topic: { type: 'choice', instructions: 'About?', criteria: { billing: 'payments', other: 'else' } } } }],
    ['images', ImageGenerationRequestDto, { model: 'gpt-image-1', prompt: 'a cat', n: 1, size: '1024x1024', quality: null }],
    ['speech', SpeechRequestDto, { model: 'tts', text: 'Hello', voice: 'nova', format: 'mp3', speed: null }],
  ])("takes the %s body as the pipe does", async (_name, type, body) => {
    const piped = await viaPipe(type, body);
    const accepted = acceptDto(type as new () => object, body);
    expect(piped).toBeDefined();
    expect(accepted).toBeInstanceOf(type);
    expect(isDeepStrictEqual(accepted, piped)).toBe(true);
    expect(JSON.stringify(accepted)).toBe(JSON.stringify(piped));
  });
});
