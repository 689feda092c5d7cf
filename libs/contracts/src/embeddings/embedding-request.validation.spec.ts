import { rejectionMessage, validatedBody } from '@igw/validation/testing';
import { EmbeddingRequestDto } from './embedding-request.dto';

// The embeddings request contract (spec: "POST /v1/embeddings", "Errors") run through the real
// global pipe, exactly as a request body reaches the controller.

const validated = (body: unknown) => validatedBody(EmbeddingRequestDto, body);
const rejection = (body: unknown) => rejectionMessage(EmbeddingRequestDto, body);

const request = (fields: Record<string, unknown> = {}) => ({ model: 'text-embedding-3-small', input: 'hello', ...fields });

describe('POST /v1/embeddings body', () => {
  it.each([
    ['a string', 'hello'],
    ['strings', ['a', 'b']],
    ['one token array', [1, 2, 3]],
    ['token arrays', [[1, 2], [0]]],
  ])('takes %s as input, unchanged', async (_name, input) => {
    expect(JSON.parse(JSON.stringify(await validated(request({ input }))))).toEqual(request({ input }));
  });

  it('takes every optional field and drops undeclared ones', async () => {
    const body = request({ dimensions: 256, encoding_format: 'base64', user: 'u-1', provider: 'openai' });
    expect(JSON.parse(JSON.stringify(await validated({ ...body, temperature: 1 })))).toEqual(body);
  });

  it('reads provider: null as no provider (the default), not as a provider to call', async () => {
    expect((await validated(request({ provider: null }))).provider).toBeUndefined();
  });

  it.each([
    [{ model: undefined }, "model: Expected a non-empty string. Received nothing"],
    [{ model: '' }, "model: Expected a non-empty string. Received ''"],
    [{ model: 7 }, 'model: Expected a non-empty string. Received number 7'],
    [{ input: undefined }, /^input: Expected a non-empty string, or a non-empty array .* Received nothing$/],
    [{ input: '' }, /^input: Expected a non-empty string, .* Received ''$/],
    [{ input: [] }, /^input: Expected .* Received an empty array$/],
    [{ input: 42 }, /^input: Expected .* Received number 42$/],
    [{ input: { text: 'x' } }, /^input: Expected .* Received object$/],
    [{ input: ['a', ''] }, "input[1]: Expected a non-empty string. Received ''"],
    [{ input: ['a', 3] }, 'input[1]: Expected a non-empty string, as the first item is. Received number 3'],
    [{ input: [1, -2] }, 'input[1]: Expected a token id (an integer of at least 0), as the first item is. Received number -2'],
    [{ input: [1, 2.5] }, 'input[1]: Expected a token id (an integer of at least 0), as the first item is. Received number 2.5'],
    [{ input: [[1], []] }, 'input[1]: Expected a non-empty array of token ids. Received an empty array'],
    [{ input: [[1], [2, 'x']] }, "input[1][1]: Expected a token id (an integer of at least 0). Received string 'x'"],
    [{ input: [[1], 'x'] }, "input[1]: Expected an array of token ids, as the first item is. Received string 'x'"],
    [{ input: Array.from({ length: 2049 }, () => 'x') }, 'input: Expected at most 2048 inputs. Received 2049'],
    [{ dimensions: 0 }, 'dimensions: Expected an integer of at least 1. Received 0'],
    [{ dimensions: 1.5 }, 'dimensions: Expected an integer. Received 1.5'],
    [{ dimensions: 1e300 }, 'dimensions: Expected an integer of at most 9007199254740991. Received 1e+300'],
    [{ dimensions: '256' }, "dimensions: Expected an integer. Received string '256'"],
    [{ encoding_format: 'int8' }, "encoding_format: Expected one of 'float', 'base64'. Received 'int8'"],
    [{ encoding_format: 1 }, "encoding_format: Expected one of 'float', 'base64'. Received number 1"],
    [{ user: 5 }, 'user: Expected a string. Received number 5'],
    [{ provider: '' }, "provider: Expected a non-empty string. Received ''"],
  ])('refuses %j naming the field', async (change, expected) => {
    const message = await rejection(request(change));
    expect(message.startsWith('Body validation error! ')).toBe(true);
    const detail = message.slice('Body validation error! '.length);
    if (typeof expected === 'string') expect(detail).toBe(expected);
    else expect(detail).toMatch(expected);
  });

  it('reports every bad field at once', async () => {
    expect(await rejection({ input: [], dimensions: -1 })).toMatch(/^Body validation error! model: .*; input: .*; dimensions: /);
  });
});
