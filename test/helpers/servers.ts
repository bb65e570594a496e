import { connect } from 'node:net';
import { afterEach } from 'vitest';

/** An http or https server. */
interface Closable {
  closeAllConnections(): void;
  close(callback: () => void): unknown;
}

const open: Closable[] = [];
afterEach(async () => {
  await Promise.all(
    open.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

/** Closes `server` (and every connection it holds) after the current test; returns it. */
export function closeAfterTest<S extends Closable>(server: S): S {
  open.push(server);
  return server;
}

/**
 * A loopback port nothing listens on. Not a freed ephemeral port: test files run in parallel, and another one's
 * server could be given that port a moment later (a "refused" test then met a server and failed). Ports below
 * 1024 are never handed out as ephemeral ones; the first of a few rarely used ones that refuses a connection now
 * is taken.
 */
export async function closedPort(): Promise<number> {
  for (const port of [1, 9, 47, 61, 83]) {
    const refused = await new Promise<boolean>((resolve) => {
      const sock = connect({ host: '127.0.0.1', port });
      sock.once('connect', () => {
        sock.destroy();
        resolve(false);
      });
      sock.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('no closed loopback port below 1024 found');
}
