import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { ChatCompletionRequestDto, CHAT_ROLES, describeValue, describeWrongType, describeWrongValue, expectedOneOf, validationIssues } from './chat-completion-request.dto';

// The contract on its own: class-transformer + class-validator with the options of the global
// pipe. The table of every field through the real pipe (NestJS ValidationPipe and its message
// formatting) is chat-completion-request.validation.spec.ts.

function issuesOf(body: Record<string, unknown>): string[] {
  const dto = plainToInstance(ChatCompletionRequestDto, body);
  const errors = validateSync(dto, { whitelist: true, forbidUnknownValues: false, validationError: { target: false, value: true } });
  return validationIssues(errors).map((issue) => `${issue.path}: ${issue.message}`);
}

const base = { model: 'm', messages: [{ role: 'user', content: 'Hi' }] };

describe('chat request contract without NestJS', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['a valid request', base, []],
    ['developer is a role', { ...base, messages: [{ role: 'developer', content: 'x' }, ...base.messages] }, []],
    ['an unknown role', { ...base, messages: [{ role: 'robot' }] }, ["messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'"]],
    ['a nested content path', { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '1d' } }] }] }, ["messages[0].content[0].cache_control.ttl: Expected one of '5m', '1h'. Received '1d'"]],
    ['a tool list path', { ...base, tools: [{ type: 'x' }, { type: 'function', function: { name: 'bad name!' } }] }, ["tools[1].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'bad name!'"]],
    ['a tool_choice path', { ...base, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{}] } } }, ['tool_choice.allowed_tools.tools[0].type: Expected a non-empty string. Received nothing']],
    ['a cross-field rule', { ...base, top_logprobs: 3 }, ['top_logprobs: Expected logprobs: true alongside top_logprobs. Received no logprobs']],
  ])('%s', (_name, body, expected) => {
    expect(issuesOf(body)).toEqual(expected);
  });

  it('lists the roles in the order messages name them', () => {
    expect(CHAT_ROLES).toEqual(['system', 'user', 'assistant', 'tool', 'developer']);
  });
});

describe('message wording', () => {
  it.each<[string, string, string]>([
    ['nothing', describeValue(undefined), 'nothing'],
    ['null', describeValue(null), 'null'],
    ['a string, quoted', describeValue('robot'), "'robot'"],
    ['a long string, cut at 60 characters', describeValue('x'.repeat(70)), `'${'x'.repeat(60)}…'`],
    ['a string with line breaks, escaped', describeValue('a\nb'), "'a\\nb'"],
    ['a number with its type', describeValue(3), 'number 3'],
    ['a boolean with its type', describeValue(false), 'boolean false'],
    ['an array', describeValue([1]), 'array'],
    ['an object', describeValue({ a: 1 }), 'object'],
    ['a string of the wrong type', describeWrongType('hot'), "string 'hot'"],
    ['a number of the right type', describeWrongValue(3), '3'],
    ['an enum violation', expectedOneOf(['a', 'b'], 'c'), "Expected one of 'a', 'b'. Received 'c'"],
    ['a single allowed value', expectedOneOf(['text'], 5), "Expected 'text'. Received number 5"],
  ])('%s', (_name, actual, expected) => {
    expect(actual).toBe(expected);
  });
});

describe('validationIssues', () => {
  const error = (property: string, fields: Partial<ValidationError>): ValidationError => Object.assign(new ValidationError(), { property, children: [], ...fields });

  it.each<[string, ValidationError[], Array<{ path: string; message: string }>]>([
    [
      'joins indexes and properties into one path',
      [error('messages', { children: [error('2', { children: [error('role', { value: 'x', constraints: { isOneOf: "Expected 'user'. Received 'x'" } })] })] })],
      [{ path: 'messages[2].role', message: "Expected 'user'. Received 'x'" }],
    ],
    [
      'appends what was received to a message without it',
      [error('count', { value: 0, constraints: { min: 'count must not be less than 1' } })],
      [{ path: 'count', message: 'count must not be less than 1. Received number 0' }],
    ],
    [
      'resolves relative issue lines against the field',
      [error('tools', { value: [], constraints: { toolList: "[3].function.name: Expected a name. Received 'a b'\n[4].type: Expected a type. Received nothing" } })],
      [
        { path: 'tools[3].function.name', message: "Expected a name. Received 'a b'" },
        { path: 'tools[4].type', message: 'Expected a type. Received nothing' },
      ],
    ],
    [
      'resolves a relative line with a numeric key',
      [error('logit_bias', { value: {}, constraints: { logitBias: '.50256: Expected a number from -100 to 100. Received 150' } })],
      [{ path: 'logit_bias.50256', message: 'Expected a number from -100 to 100. Received 150' }],
    ],
    [
      "drops @ValidateNested's message when the field's own check failed",
      [error('reasoning', { value: 'x', constraints: { isObjectField: "Expected an object. Received string 'x'", nestedValidation: 'nested property reasoning must be either object or array' } })],
      [{ path: 'reasoning', message: "Expected an object. Received string 'x'" }],
    ],
    [
      'collapses duplicates',
      [error('a', { value: 1, constraints: { one: 'Expected x. Received 1', two: 'Expected x. Received 1' } })],
      [{ path: 'a', message: 'Expected x. Received 1' }],
    ],
  ])('%s', (_name, errors, expected) => {
    expect(validationIssues(errors)).toEqual(expected);
  });
});
