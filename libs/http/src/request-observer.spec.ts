import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { takeJsonBody } from './body-parsing';
import type { ServedRequest } from './request-context';
import { requestObserver } from './request-observer';

describe('requestObserver', () => {
  let server: Server;
  const served: Array<ServedRequest & { body?: unknown }> = [];

  beforeAll(async () => {
    const observe = requestObserver('test');
    server = createServer((request: ServedRequest & { body?: unknown }, response: ServerResponse) => {
      observe(request, response);
      served.push(request);
      void takeJsonBody(request, 1 << 20).then(() => response.end(JSON.stringify({ seen: (request.body as { text: string }).text.length })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('lets go of the body as read once the answer is over, though the keep-alive connection still holds the request', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'x'.repeat(100_000) }) });
    expect(await answer.json()).toEqual({ seen: 100_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [request] = served;
    expect(request.context).toBeDefined();
    expect([request.context!.body, request.body]).toEqual([undefined, undefined]);
  });
});
