import { createServer, type Socket } from 'node:net';

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A TCP server on 127.0.0.1 that accepts connections and never says anything (to test
 * timeouts against a peer that hangs). Returns its port; the test context closes it.
 */
export async function startSilentServer(t: { after(fn: () => Promise<void> | void): void }): Promise<number> {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => silent.close(() => resolve()));
  });
  const address = silent.address();
  if (!address || typeof address !== 'object') throw new Error('silent server has no port');
  return address.port;
}
