import { createServer } from 'node:net';
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

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}
