import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderMetrics } from '@igw/observability';
import { requestObserver } from './request-observer';
import { HttpDrain, NOT_READY_SHUTTING_DOWN, SHUTTING_DOWN_MESSAGE } from './http-drain';

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One request on a connection of its own; rejects when the connection is cut. */
function get(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('HttpDrain', () => {
  let server: Server;
  let drain: HttpDrain;
  let port: number;
  /** Requests to /slow wait here until the test answers them. */
  const slow: ServerResponse[] = [];

  beforeEach(async () => {
    slow.length = 0;
    server = createServer();
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (request.url === '/slow') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('first ');
        slow.push(response);
        return;
      }
      response.end(request.url === '/healthz' ? 'alive' : 'served');
    });
    drain = new HttpDrain(server);
    drain.install();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(check()).toBe(true);
  };

  it('lets running requests finish, refuses new ones with the error body and liveness still answers', async () => {
    const running = get(port, '/slow');
    await waitFor(() => slow.length === 1);
    expect(drain.running()).toBe(1);
    drain.begin();
    const settled = drain.settled(Date.now() + 5_000);

    const refused = await get(port, '/v1/chat/completions?x=1');
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    const body = JSON.parse(refused.body) as Record<string, unknown>;
    expect(body).toMatchObject({ statusCode: 503, message: SHUTTING_DOWN_MESSAGE, path: '/v1/chat/completions', error: { type: 'api_error' } });
    expect(body.requestId).toBe(refused.headers['x-request-id']);
    const readiness = await get(port, '/readyz');
    expect(readiness.status).toBe(503);
    expect(JSON.parse(readiness.body)).toMatchObject({ message: NOT_READY_SHUTTING_DOWN });
    const liveness = await get(port, '/healthz');
    expect(liveness).toMatchObject({ status: 200, body: 'alive' });
    expect(liveness.headers.connection).toBe('close');

    slow[0].end('last');
    await expect(running).resolves.toMatchObject({ status: 200, body: 'first last' });
    await expect(settled).resolves.toBe(true);
    expect(drain.running()).toBe(0);
  });

  it('answers false at the deadline, and cutting off closes the running requests', async () => {
    const running = get(port, '/slow').then(
      () => 'answered',
      () => 'cut',
    );
    await waitFor(() => slow.length === 1);
    drain.begin();
    await expect(drain.settled(Date.now() + 50)).resolves.toBe(false);
    const gone = new Promise((resolve) => slow[0].once('close', resolve));
    drain.cutOff();
    await gone;
    await expect(running).resolves.toBe('cut');
    await expect(drain.settled(Date.now() + 1_000)).resolves.toBe(true);
  });

  it('serves as usual until the drain begins', async () => {
    expect(await get(port, '/anything')).toMatchObject({ status: 200, body: 'served' });
    await expect(drain.settled(Date.now())).resolves.toBe(true);
  });

  it('counts the requests it refuses in the HTTP metrics, through the server\'s request observer', async () => {
    const observed = createServer();
    const observedDrain = new HttpDrain(observed, requestObserver('drain-test'));
    observedDrain.install();
    await new Promise<void>((resolve) => observed.listen(0, '127.0.0.1', resolve));
    const refusals = async () => /igw_http_requests_total\{service="drain-test",route="unmatched",method="GET",status="503"[^}]*\} (\d+)/.exec((await renderMetrics()).body)?.[1];
    try {
      observedDrain.begin();
      expect((await get((observed.address() as AddressInfo).port, '/v1/models')).status).toBe(503);
      // Counted when the response closes, which may follow the client's reading it.
      for (let i = 0; i < 100 && (await refusals()) === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await refusals()).toBe('1');
    } finally {
      observed.closeAllConnections();
      await new Promise((resolve) => observed.close(resolve));
    }
  });
});

