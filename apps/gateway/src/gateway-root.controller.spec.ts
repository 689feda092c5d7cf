import { Module, type INestApplication } from '@nestjs/common';
import { ACTIVE_PAID_KEY } from '@igw/contracts/testing';
import { ApiKeyAuthenticator, generateApiKey, startHttpApp } from '@igw/http';
import { ChatController } from './chat/chat.controller';
import { CatalogueSnapshotService } from './catalogue/catalogue-snapshot.service';
import { ChatService } from './chat/chat.service';
import { EmbeddingsService } from './embeddings/embeddings.service';
import { gatewayDirectRoutes } from './gateway.app';
import { GatewayRootController } from './gateway-root.controller';
import { GeminiController } from './gemini/gemini.controller';
import { MessagesController } from './messages/messages.controller';
import { PaidRequestPipeline } from './paid-requests/paid-request-pipeline';
import { ResponsesController } from './responses/responses.controller';
import { StoredResponses } from './responses/stored-responses';


/**
 * `/` beside the chat route, started as the gateway starts (direct routes on): Claude Code's
 * `HEAD /` is answered without a key, while the direct route and the 404 of unknown routes stay as they were.
 */
describe('the gateway root (HEAD / and GET /)', () => {
  const authenticate = jest.fn(() => Promise.resolve(ACTIVE_PAID_KEY));
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    class AppModule {}
    Module({
      controllers: [GatewayRootController, ChatController, ResponsesController, MessagesController, GeminiController],
      providers: [
        { provide: PaidRequestPipeline, useValue: {} },
        // The Responses controller's stored responses are billing's: these routes are checked without them.
        { provide: StoredResponses, useValue: {} },
        { provide: EmbeddingsService, useValue: {} },
        { provide: CatalogueSnapshotService, useValue: {} },
        { provide: ChatService, useValue: { complete: (_call: unknown, deliver: (completion: unknown) => void) => (deliver({ ok: true }), Promise.resolve()) } },
        { provide: ApiKeyAuthenticator, useValue: { authenticate } },
      ],
    })(AppModule);
    app = await startHttpApp(AppModule, { name: 'gateway', host: '127.0.0.1', port: 0, portVariable: 'PORT', bodyLimit: '1mb', logLevel: 'error', directRoutes: gatewayDirectRoutes({ DIRECT_ROUTES: true }) });
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
  });

  beforeEach(() => authenticate.mockClear());

  it('answers HEAD / with 200 and no body, without a key', async () => {
    const response = await fetch(`${base}/`, { method: 'HEAD' });
    expect([response.status, await response.text()]).toEqual([200, '']);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(authenticate).not.toHaveBeenCalled();
  });

  it('answers GET / (and with a query, as ?beta=true) with the liveness body, without a key, ignoring a body or a bad key', async () => {
    for (const url of [`${base}/`, `${base}/?beta=true`]) {
      const response = await fetch(url, { headers: { authorization: 'Bearer not-a-key', 'x-api-key': 'not-a-key' } });
      expect([response.status, await response.json()]).toEqual([200, { status: 'ok' }]);
    }
    expect(authenticate).not.toHaveBeenCalled();
  });

  it('leaves other methods on / and unknown paths to the 404 error body, and chat to the direct route', async () => {
    for (const [method, path] of [
      ['POST', '/'],
      ['GET', '/nope'],
      ['HEAD', '/v1'],
    ]) {
      const response = await fetch(`${base}${path}`, { method });
      expect([method, path, response.status]).toEqual([method, path, 404]);
      if (method !== 'HEAD') expect(await response.json()).toMatchObject({ statusCode: 404, path, message: `Not Found: ${method} ${path} is not an endpoint of the gateway service.` });
    }
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${generateApiKey().key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect([chat.status, await chat.json()]).toEqual([200, { ok: true }]);
    expect(authenticate).toHaveBeenCalledTimes(1);
  });
});
