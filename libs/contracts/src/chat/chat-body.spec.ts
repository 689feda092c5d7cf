import { BadRequestException } from '@nestjs/common';
import { errorTreeValidationPipe, ISSUES_SHOWN, compiledValidation } from '@igw/validation';
import { validatedBody } from '@igw/validation/testing';
import { PIPE_CHECKED_ITEMS, validateChatBody } from './chat-body';
import { ChatCompletionRequestDto } from './chat-completion-request.dto';

// Long conversations the compiled acceptance is not sure of: the validation pipe (all in one turn
// of the event loop) is given a bounded part of them, and the answer is still the pipe's.

type Body = Record<string, unknown>;

const user = { role: 'user', content: 'Hello' };
const request = (messages: unknown[], fields: Body = {}): Body => ({ model: 'gpt-4o-mini', messages, ...fields });
const many = (count: number, item: unknown): unknown[] => Array.from({ length: count }, () => item);

async function rejection(body: unknown): Promise<string> {
  try {
    await validateChatBody(body, { azure: false });
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
  throw new Error('expected the body to be rejected');
}

/** Items (messages, content parts, tool calls) in each body the pipe is handed while `run` runs. */
async function itemsGivenToThePipe(run: () => Promise<unknown>): Promise<number[]> {
  const transform = jest.spyOn(errorTreeValidationPipe(), 'transform');
  try {
    await run().catch(() => undefined);
    return transform.mock.calls.map(([value]) => {
      const messages = (value as { messages: Array<{ content?: unknown; tool_calls?: unknown }> }).messages;
      return messages.reduce<number>((sum, message) => sum + 1 + lengthOf(message.content) + lengthOf(message.tool_calls), 0);
    });
  } finally {
    transform.mockRestore();
  }
}

const lengthOf = (value: unknown): number => (Array.isArray(value) ? value.length : 0);

describe('validateChatBody: a long conversation meets the validation pipe in a bounded part', () => {
  it('200,000 empty messages: the first issues by their own paths, then "and more"; the pipe given a bounded part', async () => {
    const body = request(many(200_000, {}));
    const message = await rejection(body);
    expect(message).toMatch(/^Body validation error! messages\[0\]\.role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'\. Received nothing; messages\[1\]\.role: /);
    expect(message.split('; ')).toHaveLength(ISSUES_SHOWN + 1);
    // Only part of the conversation was checked: how many more issues there are is not known.
    expect(message).toMatch(/; and more$/);
    expect(message.length).toBeLessThan(5_000);
    const given = await itemsGivenToThePipe(() => validateChatBody(body, { azure: false }));
    expect(given).toHaveLength(1);
    expect(given[0]).toBeLessThanOrEqual(PIPE_CHECKED_ITEMS + 2);
  });

  it('one bad message deep in a long conversation is named by its own index', async () => {
    const messages: unknown[] = many(150_001, user);
    messages[150_000] = { role: 'robot', content: 'Hi' };
    expect(await rejection(request(messages))).toBe(
      "Body validation error! messages[150000].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'",
    );
  });

  it('bad messages among good ones keep their indexes, in order', async () => {
    const messages: unknown[] = many(1_000, user);
    messages[7] = { role: 'user' };
    messages[900] = { role: 'tool', content: 'x' };
    expect(await rejection(request(messages))).toBe(
      'Body validation error! messages[7].content: Expected a string or an array of content parts. Received nothing; messages[900].tool_call_id: Expected a string (the id of the tool call this message answers). Received nothing',
    );
  });

  it('a bad field beside a long conversation is worded as the pipe words it', async () => {
    const body = request(many(1_000, user), { temperature: 5 });
    const message = await rejection(body);
    expect(message).toMatch(/^Body validation error! temperature: /);
    expect(message).toBe(await rejectionByThePipe(body));
  });

  it('one message with 200,000 empty content parts: the first issues, the pipe given a bounded part', async () => {
    const body = request([...many(300, user), { role: 'user', content: many(200_000, {}) }]);
    const message = await rejection(body);
    expect(message).toMatch(/^Body validation error! messages\[300\]\.content\[0\]\.type: /);
    expect(message).toMatch(/; and more$/);
    const given = await itemsGivenToThePipe(() => validateChatBody(body, { azure: false }));
    expect(given[0]).toBeLessThanOrEqual(PIPE_CHECKED_ITEMS + 2);
  });

  it('bad parts past the first are not checked one by one: whether a body is valid needs only its first issue', async () => {
    const body = request([{ role: 'user', content: many(90_000, {}) }]);
    const checked = jest.spyOn(compiledValidation, 'validInstance');
    try {
      expect(await rejection(body)).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.type: .*; and more$/);
      // The compiled acceptance and the pipe's bounded part each ask about a few parts, never about all 90,000.
      expect(checked.mock.calls.length).toBeLessThan(PIPE_CHECKED_ITEMS * 2);
    } finally {
      checked.mockRestore();
    }
  });

  it('200,000 tool calls in one assistant message, bounded the same way', async () => {
    const message = await rejection(request([user, { role: 'assistant', tool_calls: many(200_000, {}) }, user]));
    expect(message).toMatch(/^Body validation error! messages\[1\]\.tool_calls\[0\]\.type: /);
    expect(message).toMatch(/; and more$/);
  });

  it('a valid long conversation with a few messages the compiled acceptance is unsure of: the same DTO the pipe gives', async () => {
    const messages: unknown[] = many(2_000, user).map((message, index) => ({ ...(message as Body), content: `turn ${index}` }));
    messages[1_234] = { role: 'user', content: 'odd', valueOf: 1 };
    messages[1_500] = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' }, toString: 2 }] };
    const body = request(messages, { temperature: 0.5 });
    const validated = await validateChatBody(body, { azure: false });
    const byThePipe = await validatedBody(ChatCompletionRequestDto, body);
    expect(validated).toEqual(byThePipe);
    expect(validated.messages[1_234]).toBeInstanceOf(byThePipe.messages[1_234].constructor);
    expect(JSON.stringify(validated)).toBe(JSON.stringify(byThePipe));
  });

  it('more unusual items than the pipe is given, all valid: refused, naming the bound', async () => {
    const message = await rejection(request(many(100_000, { role: 'user', content: 'x', valueOf: 1 })));
    expect(message).toBe(
      `Body validation error! messages: Expected at most ${PIPE_CHECKED_ITEMS} messages, content parts and tool calls in messages that need the full check (one with a key named like a JavaScript object member, such as 'constructor' or 'valueOf', or with values nested more than 64 levels deep). Received more`,
    );
  });

  it('a conversation the compiled acceptance is sure of is not bounded at all', async () => {
    const validated = await validateChatBody(request(many(100_000, user)), { azure: false });
    expect(validated.messages).toHaveLength(100_000);
  });
});

async function rejectionByThePipe(body: unknown): Promise<string> {
  try {
    await validatedBody(ChatCompletionRequestDto, body);
  } catch (error) {
    return (error as BadRequestException).message;
  }
  throw new Error('expected the pipe to reject the body');
}
