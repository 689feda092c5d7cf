import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { findFreePort, UNASSIGNED_PORTS } from './embedded-postgres';

/** The kernel's ephemeral range: ports given to outgoing connections and to listen(0). */
function ephemeralRange(): [number, number] {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [low, high];
}

describe('findFreePort', () => {
  it('gives ports outside the ephemeral range, which nothing else is handed between the probe and the listen', async () => {
    const [low, high] = ephemeralRange();
    const ports = await Promise.all(Array.from({ length: 20 }, () => findFreePort()));
    for (const port of ports) expect(port < low || port > high).toBe(true);
  });

  it('gives a port a server can then listen on, and skips one that is taken', async () => {
    const port = await findFreePort();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    // The first pick lands on the taken port.
    const random = jest.spyOn(Math, 'random').mockReturnValueOnce((port - UNASSIGNED_PORTS.from + 0.5) / (UNASSIGNED_PORTS.to - UNASSIGNED_PORTS.from));
    try {
      const other = await findFreePort();
      expect(random).toHaveBeenCalledTimes(2);
      expect(other).not.toBe(port);
    } finally {
      random.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
