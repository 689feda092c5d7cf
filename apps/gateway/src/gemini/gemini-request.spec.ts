import { GeminiGenerateContentRequestDto } from '@igw/contracts';
import { plainToInstance } from 'class-transformer';
import { chatRequestForNative, chatRequestOf, jsonSchemaOf, nullsAsAbsent, promptOf, refuseUnservable, type GeminiTarget } from './gemini-request';

const openAiModel: GeminiTarget = { type: 'openai/chat-completions', capabilities: ['tools'], info: { outputMax: 1000 } };
const reasoningModel: GeminiTarget = { type: 'openai/chat-completions', capabilities: ['reasoning'], info: { outputMax: 1000 } };
const googleModel: GeminiTarget = { type: 'google/chat-completions', capabilities: ['reasoning'], info: { outputMax: 65536 } };

const body = (fields: Record<string, unknown>) => plainToInstance(GeminiGenerateContentRequestDto, fields);
const weather = { functionDeclarations: [{ name: 'get_weather', description: 'The weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING', nullable: true } }, required: ['city'] } }] };

describe("Google's GenerateContentRequest as the chat request", () => {
  it('turns the system instruction, turns, calls and their responses into chat messages, ids pairing each response with its call', () => {
    const request = chatRequestOf(
      body({
        systemInstruction: { parts: [{ text: 'Be brief. ' }, { text: 'Answer in French.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
          {
            role: 'model',
            parts: [
              { text: 'Thinking it over', thought: true },
              { text: 'Checking.' },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
              { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
            ],
          },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'Sunny' } } }, { functionResponse: { name: 'get_weather', response: { temp: 30 } } }, { text: 'And now?' }] },
        ],
        tools: [weather],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      }),
      'mini',
      openAiModel,
      false,
    );
    expect(request).toEqual({
      model: 'mini',
      messages: [
        { role: 'system', content: 'Be brief. Answer in French.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig-1' } } },
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":30}' },
        { role: 'user', content: 'And now?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: ['string', 'null'] } }, required: ['city'] } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
  });

  it.each([
    ['AUTO', undefined, 'auto'],
    ['NONE', undefined, 'none'],
    ['ANY', undefined, 'required'],
    ['ANY', ['a', 'b'], { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'a' } }, { type: 'function', function: { name: 'b' } }] } }],
  ])('sends functionCallingConfig mode %s (allowed %j) as tool_choice %j', (mode, allowedFunctionNames, choice) => {
    const request = promptOf(body({ contents: [{ parts: [{ text: 'hi' }] }], tools: [weather], toolConfig: { functionCallingConfig: { mode, allowedFunctionNames } } }), 'mini', openAiModel);
    expect(request.tool_choice).toEqual(choice);
  });

  it('maps generationConfig, lowering maxOutputTokens to the output limit, and a schema to response_format', () => {
    const request = chatRequestOf(
      body({
        contents: [{ role: 'user', parts: [{ text: 'A city?' }] }],
        generationConfig: {
          temperature: 0.3,
          topP: 0.9,
          topK: 40,
          maxOutputTokens: 50_000,
          stopSequences: ['END'],
          candidateCount: 2,
          presencePenalty: 0.5,
          frequencyPenalty: -0.5,
          seed: 7,
          responseLogprobs: true,
          logprobs: 3,
          responseMimeType: 'application/json',
          responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' } } },
        },
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      }),
      'mini',
      openAiModel,
      true,
    );
    expect(request).toMatchObject({
      stream: true,
      max_tokens: 1000,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      n: 2,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object', properties: { city: { type: 'string' } } } } },
    });
    expect(request).not.toHaveProperty('top_k');
    expect(request).not.toHaveProperty('safetySettings');
  });

  it('asks for JSON without a schema as json_object, and refuses a schema without the JSON mime type', () => {
    const json = chatRequestOf(body({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { responseMimeType: 'application/json' } }), 'mini', openAiModel, false);
    expect(json.response_format).toEqual({ type: 'json_object' });
    expect(() => chatRequestOf(body({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { responseJsonSchema: { type: 'object' } } }), 'mini', openAiModel, false)).toThrow(
      /generationConfig.responseMimeType: a response schema needs responseMimeType 'application\/json'/,
    );
  });

  it.each([
    ['a budget, to a source that reads one', googleModel, { thinkingBudget: 2048, includeThoughts: true }, { reasoning: { max_tokens: 2048 } }],
    ['a budget, as an effort elsewhere', reasoningModel, { thinkingBudget: 2048 }, { reasoning_effort: 'low' }],
    ['no thinking', googleModel, { thinkingBudget: 0 }, { reasoning: { effort: 'none' } }],
    ['a level', reasoningModel, { thinkingLevel: 'HIGH' }, { reasoning_effort: 'high' }],
    ['thoughts hidden', googleModel, { includeThoughts: false }, { reasoning: { exclude: true } }],
  ])('sends thinkingConfig with %s', (_case, model, thinkingConfig, reasoning) => {
    const request = promptOf(body({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig } }), 'm', model);
    expect(request).toMatchObject(reasoning);
  });

  it('sends no thinking request to a model that does not reason', () => {
    const request = promptOf(body({ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig: { thinkingBudget: 4096 } } }), 'm', openAiModel);
    expect(request).not.toHaveProperty('reasoning');
    expect(request).not.toHaveProperty('reasoning_effort');
  });

  it('sends inline images, PDFs and audio as chat parts, an image by URL as one, and googleSearch as the web search', () => {
    const request = promptOf(
      body({
        contents: [
          {
            role: 'user',
            parts: [
              { text: 'Look' },
              { inlineData: { mimeType: 'image/png', data: 'iVBOR' } },
              { inlineData: { mimeType: 'application/pdf', data: 'JVBER' } },
              { inlineData: { mimeType: 'audio/wav', data: 'UklGR' } },
              { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
        tools: [{ googleSearch: {} }],
      }),
      'm',
      openAiModel,
    );
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBER' } },
          { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
    expect(request.enable_search).toBe(true);
  });

  it('refuses what the chat request cannot carry, naming the part; for native sources it is left out and said why', () => {
    const video = body({ contents: [{ role: 'user', parts: [{ text: 'Watch' }, { fileData: { mimeType: 'video/mp4', fileUri: 'https://example.com/v.mp4' } }] }] });
    expect(() => chatRequestOf(video, 'm', openAiModel, false)).toThrow(/contents\[0\]\.parts\[1\]\.fileData: only an image by http\(s\) URL/);
    const { request, untranslatable } = chatRequestForNative(video, 'm', googleModel, false);
    expect(request.messages).toEqual([{ role: 'user', content: 'Watch' }]);
    expect(untranslatable).toMatch(/^Body validation error! contents\[0\]\.parts\[1\]\.fileData: /);
  });

  it('refuses a functionResponse that answers no call, and cachedContent', () => {
    expect(() => promptOf(body({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'ghost', response: {} } }] }] }), 'm', openAiModel)).toThrow(
      /contents\[0\]\.parts\[0\]\.functionResponse\.name: a functionResponse for "ghost" answers no earlier functionCall/,
    );
    expect(() => refuseUnservable(body({ contents: [{ parts: [{ text: 'x' }] }], cachedContent: 'cachedContents/abc' }))).toThrow(/cachedContent: a cached content of the upstream account/);
  });

  it("reads Google's Schema as JSON Schema, nested", () => {
    expect(jsonSchemaOf({ type: 'ARRAY', items: { type: 'OBJECT', properties: { n: { type: 'INTEGER', format: 'int32' } }, nullable: true } })).toEqual({
      type: 'array',
      items: { type: ['object', 'null'], properties: { n: { type: 'integer', format: 'int32' } } },
    });
  });

  it('reads a null field as one left out, as proto3 JSON does, in the request and its configs', () => {
    const request = nullsAsAbsent(body({ contents: [{ parts: [{ text: 'x' }] }], systemInstruction: null, tools: null, generationConfig: { temperature: null, maxOutputTokens: 5, thinkingConfig: { thinkingBudget: null } }, toolConfig: { functionCallingConfig: null } }));
    expect(chatRequestOf(request, 'm', googleModel, false)).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 5 });
  });
});
