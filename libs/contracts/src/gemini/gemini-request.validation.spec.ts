import { rejectionMessage, validatedBody } from '@igw/validation/testing';
import { GeminiBatchEmbedContentsRequestDto, GeminiCountTokensRequestDto, GeminiEmbedContentRequestDto, GeminiGenerateContentRequestDto } from './gemini-request.dto';

/** What the Gemini CLI sends, shortened: a system instruction, function declarations, thinking, and fields the gateway does not know. */
const cliBody = {
  contents: [
    { role: 'user', parts: [{ text: 'Create hello.txt' }] },
    { role: 'model', parts: [{ text: 'Thinking', thought: true }, { functionCall: { name: 'write_file', args: { path: 'hello.txt' } }, thoughtSignature: 'c2ln' }] },
    { role: 'user', parts: [{ functionResponse: { id: 'x', name: 'write_file', response: { output: 'done' } } }] },
  ],
  systemInstruction: { role: 'user', parts: [{ text: 'You are an interactive CLI agent.' }] },
  tools: [{ functionDeclarations: [{ name: 'write_file', description: 'Writes a file', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } } } }] }],
  generationConfig: { temperature: 0, topP: 1, thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 }, responseModalities: ['TEXT'] },
  labels: { session: 'abc' },
};

describe("the Gemini API's request bodies", () => {
  it('takes what the Gemini CLI sends, parts kept as sent, unknown config fields dropped', async () => {
    const body = await validatedBody(GeminiGenerateContentRequestDto, structuredClone(cliBody));
    expect(body.contents).toEqual(cliBody.contents);
    expect(JSON.parse(JSON.stringify(body.generationConfig))).toEqual({ temperature: 0, topP: 1, thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } });
    expect(body).not.toHaveProperty('labels');
  });

  it.each([
    ['no contents', {}, 'contents: Expected a non-empty array of contents. Received nothing'],
    ['an OpenAI role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, "contents[0].role: Expected one of 'user', 'model'. Received 'assistant'"],
    ['a part of nothing', { contents: [{ parts: [{ thought: true }] }] }, 'contents[0].parts[0]: Expected a part with one of text, inlineData'],
    ['a call without a name', { contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] }, 'contents[0].parts[0].functionCall.name: Expected a non-empty string. Received nothing'],
    ['inline data without its type', { contents: [{ parts: [{ inlineData: { data: 'AAAA' } }] }] }, 'contents[0].parts[0].inlineData.mimeType: Expected a non-empty string. Received nothing'],
    ['a second kind in a part that is not one', { contents: [{ role: 'model', parts: [{ text: 'x', functionCall: 'write_file' }] }] }, 'contents[0].parts[0].functionCall: Expected an object {name, args}. Received string'],
    ['a bad function name', { contents: [{ parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: '1 bad' }] }] }, 'tools[0].functionDeclarations[0].name: Expected 1-128 letters'],
    ['an unknown calling mode', { contents: [{ parts: [{ text: 'x' }] }], toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, "toolConfig.functionCallingConfig.mode: Expected one of 'AUTO'"],
    ['a temperature out of range', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { temperature: 3 } }, 'generationConfig.temperature: Expected a number from 0 to 2. Received 3'],
    ['a fractional budget', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 1.5 } } }, 'generationConfig.thinkingConfig.thinkingBudget: Expected an integer'],
  ])('refuses %s, naming the first wrong field', async (_case, body, message) => {
    expect(await rejectionMessage(GeminiGenerateContentRequestDto, body)).toContain(`Body validation error! ${message}`);
  });

  it('bounds the function declarations of a request', async () => {
    const declarations = Array.from({ length: 513 }, (_, index) => ({ name: `f${index}` }));
    expect(await rejectionMessage(GeminiGenerateContentRequestDto, { contents: [{ parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: declarations }] })).toContain('tools: Expected at most 512 function declarations. Received 513');
  });

  it('takes countTokens as contents or a whole request, and embeddings of text only', async () => {
    await expect(validatedBody(GeminiCountTokensRequestDto, { generateContentRequest: cliBody })).resolves.toBeDefined();
    await expect(validatedBody(GeminiEmbedContentRequestDto, { content: { parts: [{ text: 'hi' }] }, taskType: 'RETRIEVAL_QUERY' })).resolves.toBeDefined();
    expect(await rejectionMessage(GeminiEmbedContentRequestDto, { content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AA' } }] } })).toContain('content.parts[0]: Expected a text part {text} (embeddings take text only)');
    expect(await rejectionMessage(GeminiBatchEmbedContentsRequestDto, { requests: [{ content: { parts: [{ text: 'a' }] } }, { content: { parts: [] } }] })).toContain('requests[1].content.parts: Expected a non-empty array of text parts');
  });
});
