import { ModerationRequestDto } from '../moderations/moderation-request.dto';
import { rejectionMessage, validatedBody } from '@igw/validation/testing';
import { CompletionRequestDto } from './completion-request.dto';

describe('POST /v1/completions body', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a string prompt with sampling', { model: 'm', prompt: 'hi', max_tokens: 16, temperature: 0, top_p: 1, n: 2, stop: ['\n'], seed: 1, user: 'u' }],
    ['fill-in-the-middle with echo and logprobs', { model: 'm', prompt: 'def f(', suffix: ')', echo: true, logprobs: 5, max_tokens: 0 }],
    ['token arrays, best_of and penalties', { model: 'm', prompt: [[1, 2], [3]], best_of: 3, n: 2, presence_penalty: -2, frequency_penalty: 2, logit_bias: { '50256': -100 } }],
    ['a stream asking for its usage', { model: 'm', prompt: ['a', 'b'], stream: true, stream_options: { include_usage: true } }],
    ['the nulls the SDKs send for absent fields', { model: 'm', prompt: 'x', suffix: null, logprobs: null, stop: null, best_of: null, provider: null }],
  ])('accepts %s', async (_name, body) => {
    const validated = (await validatedBody(CompletionRequestDto, body)) as unknown as Record<string, unknown>;
    expect(validated.prompt).toEqual(body.prompt);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no prompt', { model: 'm' }, 'prompt: Expected a string, or a non-empty array'],
    ['a prompt list of mixed items', { model: 'm', prompt: ['a', 1] }, 'prompt[1]: Expected a string, as the first item is. Received number 1'],
    ['a negative token id', { model: 'm', prompt: [[1, -2]] }, 'prompt[0][1]: Expected a token id'],
    ['n past 128', { model: 'm', prompt: 'x', n: 129 }, 'n: Expected'],
    ['logprobs past 5', { model: 'm', prompt: 'x', logprobs: 6 }, 'logprobs: Expected'],
    ['best_of below n', { model: 'm', prompt: 'x', n: 4, best_of: 2 }, 'best_of: Expected at least n (4)'],
    ['best_of with a stream', { model: 'm', prompt: 'x', best_of: 2, stream: true }, 'best_of: Expected 1 or nothing with stream: true'],
    ['five stop sequences', { model: 'm', prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop: Expected at most 4'],
    ['a chat field', { model: 'm', prompt: 'x', messages: [] }, "messages: Expected one of the fields 'model', 'prompt',"],
  ])('refuses %s, naming the field', async (_name, body, message) => {
    expect(await rejectionMessage(CompletionRequestDto, body)).toContain(`Body validation error! ${message}`);
  });
});

describe('POST /v1/moderations body', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a string, no model', { input: 'hello' }],
    ['strings', { model: 'omni-moderation-latest', input: ['a', 'b'] }],
    ['text and image parts', { input: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
  ])('accepts %s', async (_name, body) => {
    expect(((await validatedBody(ModerationRequestDto, body)) as unknown as Record<string, unknown>).input).toEqual(body.input);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no input', {}, 'input: Expected a non-empty string'],
    ['an empty string', { input: '' }, "input: Expected a non-empty string, a non-empty array (at most 2048) of strings, or a non-empty array of parts {type: 'text', text} and {type: 'image_url', image_url: {url}}. Received ''"],
    ['an image that is no URL', { input: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }, "input[0].image_url.url: Expected an http(s) URL or a data:image/ URL. Received string 'file:///etc/passwd'"],
    ['an unknown part', { input: [{ type: 'audio', data: 'x' }] }, "input[0].type: Expected 'text' or 'image_url'. Received string 'audio'"],
    ['too many inputs', { input: Array.from({ length: 2049 }, () => 'x') }, 'input: Expected at most 2048 inputs. Received 2049'],
    ['a field the API does not have', { input: 'x', threshold: 0.5 }, "threshold: Expected one of the fields 'model', 'input', 'provider'. Received an unknown field"],
  ])('refuses %s, naming the field', async (_name, body, message) => {
    expect(await rejectionMessage(ModerationRequestDto, body)).toContain(`Body validation error! ${message}`);
  });
});
