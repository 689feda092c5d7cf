import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { isDeepStrictEqual } from 'node:util';
import { appValidationPipe } from '@igw/validation';
import { AzureChatCompletionRequestDto, ChatCompletionRequestDto } from '@igw/contracts';
import { ACTIVE_PAID_KEY } from '@igw/contracts/testing';
import { AllExceptionsFilter, ApiKeyAuthenticator, generateApiKey, requestIdMiddleware, routeNotFoundMessage } from '@igw/http';
import { ChatController } from './chat.controller';
import { ChatService, type ChatCall } from './chat.service';

// The chat routes take their body through validateChatBody (the compiled acceptance, else the app's
// validation pipe), not through the global pipe: the same values and the same 400s as before,
// validated once.


describe('chat routes: the validated body', () => {
  let app: INestApplication;
  let base: string;
  const calls: ChatCall[] = [];
  const pipe = appValidationPipe();
  const pipeCalls = jest.spyOn(pipe, 'transform');

  beforeAll(async () => {
    class TestModule {}
    Module({
      controllers: [ChatController],
      providers: [
        { provide: ChatService, useValue: { complete: (call: ChatCall, deliver: (completion: unknown) => void) => (calls.push(call), deliver({ ok: true }), Promise.resolve()) } },
        { provide: ApiKeyAuthenticator, useValue: { authenticate: () => Promise.resolve(ACTIVE_PAID_KEY) } },
      ],
    })(TestModule);
    app = await NestFactory.create(TestModule, { logger: false });
    // As startHttpApp does.
    app.use(requestIdMiddleware);
    app.useGlobalFilters(new AllExceptionsFilter(routeNotFoundMessage('gateway', undefined)));
    app.useGlobalPipes(appValidationPipe());
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    calls.length = 0;
    pipeCalls.mockClear();
  });

  // The guard refuses keys that cannot be real before asking the authenticator.
  const key = generateApiKey().key;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as { message?: string } };
  };
  /** What the app's pipe makes of a body (or the message it refuses it with), parsed as the server parses it. */
  const viaPipe = (body: unknown, metatype: unknown): Promise<{ value?: unknown; message?: string }> =>
    pipe.transform(JSON.parse(JSON.stringify(body)), { type: 'body', metatype: metatype as typeof ChatCompletionRequestDto }).then(
      (value: unknown) => ({ value }),
      (error: Error) => ({ message: error.message }),
    );
  const bodyValidations = () => pipeCalls.mock.calls.filter(([, metadata]) => metadata.type === 'body').length;

  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

  it.each(['/v1/chat/completions', '/chat/completions'])('%s: a common body takes the direct route and reaches the service as the pipe builds it', async (path) => {
    const body = { model: 'mini', messages: [{ role: 'user', content: 'Hello' }], stream: false, tools, temperature: 0.2, junk: 1 };
    expect((await post(path, body)).status).toBe(200);
    expect(bodyValidations()).toBe(0);
    expect(calls[0].body).toBeInstanceOf(ChatCompletionRequestDto);
    expect(isDeepStrictEqual(calls[0].body, (await viaPipe(body, ChatCompletionRequestDto)).value)).toBe(true);
  });

  it('a body the acceptor is not sure about goes through the pipe, once', async () => {
    const body = { model: 'mini', messages: [{ role: 'user', content: 'Hello' }], tools: [{ type: 'function', function: { name: 'f', parameters: { properties: { toString: {} } } } }] };
    expect((await post('/v1/chat/completions', body)).status).toBe(200);
    expect(bodyValidations()).toBe(1);
    expect(JSON.stringify(calls[0].body.tools)).toBe('[{"type":"function","function":{"name":"f","parameters":{"properties":{}}}}]');
  });

  it('an invalid body gets the pipe message, validated once', async () => {
    const body = { model: 'mini', messages: [{ role: 'robot', content: 'Hello' }], temperature: 3 };
    const response = await post('/v1/chat/completions', body);
    expect(response.status).toBe(400);
    expect(bodyValidations()).toBe(1);
    expect(calls).toHaveLength(0);
    expect(response.body.message).toBe((await viaPipe(body, ChatCompletionRequestDto)).message);
    expect(response.body.message).toMatch(/^Body validation error! messages\[0\]\.role: Expected one of/);
  });

  it('the Azure-style path: the deployment names the model, the body needs none', async () => {
    const body = { messages: [{ role: 'user', content: 'Hello' }], stream: false };
    expect((await post('/openai/deployments/my/deployment/chat/completions?api-version=2024-10-21', body)).status).toBe(200);
    expect(bodyValidations()).toBe(0);
    const validated = (await viaPipe(body, AzureChatCompletionRequestDto)).value as object;
    expect(calls[0].body).toEqual({ ...validated, model: 'my/deployment' });
  });

  it('the Azure-style path: an invalid body gets the pipe message, before the api-version check', async () => {
    const body = { model: 5, messages: [] };
    const response = await post('/openai/deployments/d/chat/completions', body);
    expect(response.status).toBe(400);
    expect(response.body.message).toBe((await viaPipe(body, AzureChatCompletionRequestDto)).message);
    expect(response.body.message).toMatch(/^Body validation error! model: model must be a string\. Received number 5; messages: /);
  });
});
