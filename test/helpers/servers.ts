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
