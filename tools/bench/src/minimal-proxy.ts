// The least any Node.js gateway does, as the benchmark's yardstick: read the request, send it
// on with undici, stream the answer back. No auth, limits, validation or metering. Run pinned
// like the gateway, it shows how much of the gateway's added latency is this machine's (the
// wake-ups of a request crossing cores) rather than the gateway's own work.
// Settings: UPSTREAM (base URL), PORT.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new Pool(process.env.UPSTREAM!, { connections: 128, pipelining: 1 });

createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    upstream
      .request({ path: request.url!, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bench' }, body: Buffer.concat(chunks) })
      .then(async (answer) => {
        response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
        for await (const piece of answer.body) response.write(piece);
        response.end();
      })
      .catch(() => {
        response.writeHead(502).end();
      });
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
