import { normalizeToolSchemas } from './tool-schemas';

type FunctionTool = { type: string; function: { name: string; parameters?: unknown } };

describe('normalizeToolSchemas', () => {
  it('completes missing or partial parameter schemas into object schemas', () => {
    const [bare, typeless] = normalizeToolSchemas<FunctionTool>([
      { type: 'function', function: { name: 'a' } },
      { type: 'function', function: { name: 'b', parameters: { properties: { x: { type: 'string' } } } } },
    ]);
    expect(bare).toEqual({ type: 'function', function: { name: 'a', parameters: { type: 'object', properties: {} } } });
    expect(typeless.function.parameters).toEqual({ type: 'object', properties: { x: { type: 'string' } } });
  });

  it('drops annotation keywords at every depth and keeps constraints', () => {
    const [tool] = normalizeToolSchemas<FunctionTool>([
      {
        type: 'function',
        function: {
          name: 'c',
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: {
              when: { type: 'string', format: 'date', examples: ['2026-01-01'], $comment: 'x' },
              list: { type: 'array', items: { $id: 'i', type: 'integer', minimum: 1 } },
            },
            required: ['when', 'ghost'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(tool.function.parameters).toEqual({
      type: 'object',
      properties: { when: { type: 'string', format: 'date' }, list: { type: 'array', items: { type: 'integer', minimum: 1 } } },
      required: ['when'],
      additionalProperties: false,
    });
  });

  it('leaves other tools and the input alone', () => {
    const custom = { type: 'custom', custom: { name: 'd' } };
    const input: unknown[] = [{ type: 'function', function: { name: 'e', parameters: { $id: 'x', type: 'object', properties: {} } } }, custom];
    const snapshot = JSON.stringify(input);
    const out = normalizeToolSchemas(input);
    expect(out[1]).toBe(custom);
    expect(JSON.stringify(input)).toBe(snapshot);
  });
});
