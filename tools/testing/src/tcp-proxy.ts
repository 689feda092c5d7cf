import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Destroys every proxied connection and refuses new ones until restore(). */
  cut(): void;
  /**
   * Plays a server that stops answering: connections stay open (new ones are accepted) and
   * everything sent either way is swallowed, until restore().
   */
  blackHole(): void;
  /**
   * Plays a server that stops for a while (a frozen process): connections stay open, and
   * what is sent either way is held back, then delivered in order at restore().
   */
  freeze(): void;
  /**
   * Ends a cut, a black hole or a freeze. Connections that were black-holed are then closed, as TCP
   * ends a connection whose peer stayed silent too long: what they swallowed is never delivered.
   */
  restore(): void;
  /** Connections open now. */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 a test can cut, black-hole and restore, to play outages of the server behind it. */
export function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const swallowing = new Set<Socket>();
  let mode: 'open' | 'refusing' | 'black-hole' | 'frozen' = 'open';
  const frozen = new Set<{ client: Socket; upstream: Socket }>();
  const flow = (pair: { client: Socket; upstream: Socket }) => {
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };
  const hold = (pair: { client: Socket; upstream: Socket }) => {
    frozen.add(pair);
    pair.client.unpipe();
    pair.upstream.unpipe();
    pair.client.pause();
    pair.upstream.pause();
  };
  const swallow = (socket: Socket) => {
    swallowing.add(socket);
    socket.unpipe();
    // Flowing with no consumer: whatever arrives is dropped.
    socket.removeAllListeners('data');
    socket.resume();
  };
  const server: Server = createServer((client) => {
    if (mode === 'refusing') {
      client.destroy();
      return;
    }
    if (mode === 'black-hole') {
      client.on('error', () => client.destroy()).on('close', () => swallowing.delete(client));
      swallow(client);
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      frozen.delete(pair);
      swallowing.delete(client);
      swallowing.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    if (mode === 'frozen') hold(pair);
    else flow(pair);
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  const destroyAll = () => {
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      pair.client.destroy();
      pair.upstream.destroy();
    }
  };
  const endSwallowed = () => {
    for (const socket of [...swallowing]) socket.destroy();
    swallowing.clear();
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        port,
        cut() {
          mode = 'refusing';
          destroyAll();
        },
        blackHole() {
          mode = 'black-hole';
          for (const pair of pairs) {
            swallow(pair.client);
            swallow(pair.upstream);
          }
        },
        freeze() {
          mode = 'frozen';
          for (const pair of pairs) hold(pair);
        },
        restore() {
          mode = 'open';
          endSwallowed();
          for (const pair of frozen) if (pairs.has(pair)) flow(pair);
          frozen.clear();
        },
        connections: () => pairs.size + [...swallowing].filter((socket) => ![...pairs].some((pair) => pair.upstream === socket)).length,
        close() {
          mode = 'refusing';
          destroyAll();
          endSwallowed();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
