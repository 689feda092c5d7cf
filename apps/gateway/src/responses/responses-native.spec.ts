import type { ResponsesTool } from '@igw/contracts';
import { GatewayException } from '@igw/platform';
import { nativeResponsesTools, refuseFileIds, ResponsesNativeWriter, takesResponses } from './responses-native';

describe('the Responses request sent natively to OpenAI and Azure', () => {
  it('goes to sources of the OpenAI and Azure wire formats that declare native responses, to no other', () => {
    expect(takesResponses({ provider: 'openai', native: ['responses'] })).toBe(true);
    expect(takesResponses({ provider: 'azure', native: ['responses', 'web_search'] })).toBe(true);
    expect(takesResponses({ provider: 'openai' })).toBe(false);
    // An OpenAI-compatible server with the API (vLLM, OpenRouter) may declare it too; Anthropic's and Gemini's formats cannot.
    expect(takesResponses({ provider: 'vllm', native: ['responses'] })).toBe(true);
    expect(takesResponses({ provider: 'google', native: ['responses'] })).toBe(false);
    expect(takesResponses({ provider: 'anthropic', native: ['responses'] })).toBe(false);
  });

  it('passes functions, namespaces and custom tools; web search only where the source searches; leaves out the built-ins run on the operator account', () => {
    const tools = [
      { type: 'function', name: 'ls' },
      { type: 'namespace', name: 'fs', tools: [] },
      { type: 'custom', name: 'apply' },
      { type: 'web_search' },
      { type: 'file_search', vector_store_ids: ['vs_someone_else'] },
      { type: 'code_interpreter' },
      { type: 'mcp', server_url: 'http://169.254.169.254/' },
    ] as unknown as ResponsesTool[];
    expect(nativeResponsesTools(tools, true)).toEqual({ tools: tools.slice(0, 4), dropped: ['file_search', 'code_interpreter', 'mcp'] });
    expect(nativeResponsesTools(tools, false)).toEqual({ tools: tools.slice(0, 3), dropped: ['web_search', 'file_search', 'code_interpreter', 'mcp'] });
  });

  it('writes the events as they came, the response ones with the catalogue model, response.completed with meta.usage', () => {
    const writer = new ResponsesNativeWriter('openai/gpt');
    const delta = '{"type":"response.output_text.delta","sequence_number":4,"delta":"Hi"}';
    expect(writer.event({ name: 'response.output_text.delta', data: delta, parsed: JSON.parse(delta), chunks: [] }, () => undefined)).toBe(`event: response.output_text.delta\ndata: ${delta}\n\n`);
    const completed = { type: 'response.completed', sequence_number: 5, response: { id: 'resp_1', model: 'gpt-upstream', usage: { input_tokens: 1 } } };
    expect(JSON.parse(writer.event({ name: 'response.completed', data: JSON.stringify(completed), parsed: completed, chunks: [] }, () => ({ credits_used: 2, usd_spent: 0.000001 })).split('data: ')[1])).toEqual({
      ...completed,
      response: { ...completed.response, model: 'openai/gpt', meta: { usage: { credits_used: 2, usd_spent: 0.000001 } } },
    });
    expect(JSON.parse(writer.failure('gone').split('data: ')[1])).toEqual({ type: 'error', sequence_number: 6, code: 'upstream_error', message: 'gone', param: null });
  });

  it("refuses a file_id anywhere in the input: the upstream account's files are not the client's", () => {
    const input = [{ type: 'computer_call_output', call_id: 'c', output: { type: 'input_image', file_id: 'file_someone_elses' } }];
    expect(() => refuseFileIds(input, 'input')).toThrow(GatewayException);
    expect(() => refuseFileIds(input, 'input')).toThrow('input[0].output.file_id');
    expect(() => refuseFileIds([{ role: 'user', content: [{ type: 'input_text', text: 'file_id' }] }], 'input')).not.toThrow();
  });
});
