import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Destroys every proxied connection and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  /** Connections open now. */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 a test can cut and restore, to play an outage of the server behind it. */
export function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        port,
        cut() {
          refusing = true;
          for (const pair of [...pairs]) {
            pairs.delete(pair);
            pair.client.destroy();
            pair.upstream.destroy();
          }
        },
        restore() {
          refusing = false;
        },
        connections: () => pairs.size,
        close() {
          refusing = true;
          for (const pair of pairs) {
            pair.client.destroy();
            pair.upstream.destroy();
          }
          pairs.clear();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}
