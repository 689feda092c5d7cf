import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { ChatCompletionRequestDto, AuthenticatedKey } from '@igw/contracts';
import type { ServedRequest } from '@igw/http';
import type { ChatService } from './chat.service';
import { respondToChat } from './chat-responder';

// A client that reads slowly makes the responder wait for 'drain' once per event it writes.
// Each wait must leave no listener behind on the response, however many there are.

const EVENTS = 60;
const EVENT = `data: ${'x'.repeat(64 * 1024)}\n\n`;

describe('respondToChat streaming to a slow reader', () => {
  let server: Server;
  let port: number;
  /** Listeners on the response each time the stream is asked for its next event. */
  const listenerCounts: Array<{ close: number; drain: number }> = [];
  let streamEnded!: Promise<void>;

  beforeAll(async () => {
    let markEnded!: () => void;
    streamEnded = new Promise<void>((resolve) => (markEnded = resolve));
    server = createServer((request, response: ServerResponse) => {
      request.resume();
      const chat = {
        openStream: async () =>
          (async function* events() {
            try {
              for (let index = 0; index < EVENTS; index++) {
                listenerCounts.push({ close: response.listenerCount('close'), drain: response.listenerCount('drain') });
                yield EVENT;
              }
            } finally {
              markEnded();
            }
          })(),
      } as unknown as ChatService;
      const served = Object.assign(request, { context: { requestId: 'req-1', auth: {} as AuthenticatedKey } }) as ServedRequest;
      void respondToChat(chat, { model: 'm', messages: [], stream: true } as unknown as ChatCompletionRequestDto, served, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('waits for each drain with one pair of listeners, removed once it is over', async () => {
    const socket = connect(port, '127.0.0.1');
    try {
      socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      let received = 0;
      let markAllReceived!: () => void;
      const allReceived = new Promise<void>((resolve) => (markAllReceived = resolve));
      // Read a little at a time: pause after every chunk, resume on the next turn of the loop.
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > EVENTS * EVENT.length) markAllReceived();
        socket.pause();
        setImmediate(() => socket.resume());
      });
      await allReceived;
      await streamEnded;
    } finally {
      socket.destroy();
    }
    expect(listenerCounts).toHaveLength(EVENTS);
    const [first] = listenerCounts;
    // Every event of 64 KiB fills the socket: the responder waited for a drain before asking
    // again. Listeners left by those waits would show here (and past ten, as Node's
    // MaxListenersExceededWarning; Jest's sandboxed process does not see that warning).
    for (const counts of listenerCounts) expect(counts).toEqual(first);
  });
});
