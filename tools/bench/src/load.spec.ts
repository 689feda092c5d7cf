import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad, type LoadPlan } from './load';
import { RESPONSES_STREAM_EVENTS } from './services';

/** How long the test server waits before the first event (after bytes that are no event). */
const FIRST_EVENT_DELAY_MS = 200;

/**
 * The load generator's first chunk of a stream with named events: the first event's arrival,
 * found even split across pieces, not the first bytes; and a stream that never sends its last
 * event is an error, though its status is 200.
 */
describe('runLoad on streams with named events', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': keep-alive\n\n');
      const complete = request.url === '/complete';
      setTimeout(() => {
        response.write('event: respo');
        setTimeout(() => {
          response.write('nse.created\ndata: {}\n\nevent: response.output_text.delta\ndata: {}\n\n');
          response.end(complete ? 'event: response.completed\ndata: {}\n\n' : 'event: error\ndata: {}\n\n');
        }, 10);
      }, FIRST_EVENT_DELAY_MS);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const plan = (path: string, events: boolean): LoadPlan => ({
    url: `${base}${path}`,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    concurrency: 1,
    durationMs: 10_000,
    maxRequests: 1,
    stream: true,
    streamEvents: events ? RESPONSES_STREAM_EVENTS : undefined,
  });

  it('times the first chunk at the first event, split across pieces, and counts a completed stream as served', async () => {
    const [byEvents, byBytes] = [await runLoad(plan('/complete', true)), await runLoad(plan('/complete', false))];
    expect([byEvents.requests, byEvents.errors, byBytes.errors]).toEqual([1, 0, 0]);
    expect(byEvents.firstChunk[0]).toBeGreaterThanOrEqual(FIRST_EVENT_DELAY_MS);
    expect(byBytes.firstChunk[0]).toBeLessThan(byEvents.firstChunk[0]);
  });

  it('counts a stream without its last event as an error', async () => {
    const result = await runLoad(plan('/cut', true));
    expect([result.requests, result.errors]).toEqual([1, 1]);
  });
});
