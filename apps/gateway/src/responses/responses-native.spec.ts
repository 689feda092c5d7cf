import type { ResponsesTool } from '@igw/contracts';
import { GatewayException } from '@igw/http';
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

  const echoed = { id: 'resp_0f8fad5bd9cb469fa16570867728950e', store: true, previous_response_id: 'resp_1f8fad5bd9cb469fa16570867728950e' };
  const completed = { type: 'response.completed', sequence_number: 5, response: { id: 'resp_upstream', model: 'gpt-upstream', store: false, previous_response_id: null, usage: { input_tokens: 1 } } };
  const completedEvent = { name: 'response.completed', data: JSON.stringify(completed), parsed: completed, chunks: [] };
  const dataOf = (text: string) => JSON.parse(text.split('data: ')[1]) as Record<string, unknown>;

  it("writes the events as they came, the response ones with the catalogue model and the gateway's id and store, response.completed with meta.usage", () => {
    const writer = new ResponsesNativeWriter('openai/gpt', { ...echoed, store: false });
    const delta = '{"type":"response.output_text.delta","sequence_number":4,"delta":"Hi"}';
    expect(writer.event({ name: 'response.output_text.delta', data: delta, parsed: JSON.parse(delta), chunks: [] }, () => undefined)).toBe(`event: response.output_text.delta\ndata: ${delta}\n\n`);
    expect(dataOf(writer.event(completedEvent, () => ({ credits_used: 2, usd_spent: 0.000001 })) as string)).toEqual({
      ...completed,
      response: { ...completed.response, ...echoed, store: false, model: 'openai/gpt', meta: { usage: { credits_used: 2, usd_spent: 0.000001 } } },
    });
    expect(dataOf(writer.failure('gone'))).toEqual({ type: 'error', sequence_number: 6, code: 'upstream_error', message: 'gone', param: null });
  });

  it('sends response.completed once the response it carries is kept, as the keeper returned it; keeps no other event', async () => {
    const kept: Array<Record<string, unknown>> = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const writer = new ResponsesNativeWriter('openai/gpt', echoed, async (response) => {
      kept.push(response);
      await released;
      // Billing could not keep it: the answer says so.
      return { ...response, store: false };
    });
    const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_upstream', status: 'in_progress' } };
    expect(typeof writer.event({ name: 'response.created', data: JSON.stringify(created), parsed: created, chunks: [] }, () => undefined)).toBe('string');
    expect(kept).toEqual([]);
    let sent: string | undefined;
    const pending = (writer.event(completedEvent, () => ({ credits_used: 2, usd_spent: 0.000001 })) as Promise<string>).then((text) => (sent = text));
    expect(kept).toEqual([{ ...completed.response, ...echoed, model: 'openai/gpt', meta: { usage: { credits_used: 2, usd_spent: 0.000001 } } }]);
    await Promise.resolve();
    expect(sent).toBeUndefined();
    release();
    await pending;
    expect(dataOf(sent!)).toEqual({ ...completed, response: { ...kept[0], store: false } });
  });

  it("refuses a file_id anywhere in the input: the upstream account's files are not the client's", () => {
    const input = [{ type: 'computer_call_output', call_id: 'c', output: { type: 'input_image', file_id: 'file_someone_elses' } }];
    expect(() => refuseFileIds(input, 'input')).toThrow(GatewayException);
    expect(() => refuseFileIds(input, 'input')).toThrow('input[0].output.file_id');
    expect(() => refuseFileIds([{ role: 'user', content: [{ type: 'input_text', text: 'file_id' }] }], 'input')).not.toThrow();
  });
});
