/**
 * An https front for tests: terminates TLS with the fixture certificate (test/fixtures/tls/gateway-*.pem, valid
 * for gateway.internal, localhost and 127.0.0.1) and forwards every request to a plain-http gateway (gw sim).
 * Records the Authorization header of each request it received.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { closeAfterTest } from './servers.js';

export const FIXTURE_TLS = join(import.meta.dirname, '..', 'fixtures', 'tls');
/** The CA file a client needs to trust the front (the certificate is self-signed). */
export const GATEWAY_CERT = join(FIXTURE_TLS, 'gateway-cert.pem');

/** Starts the front on 127.0.0.1 before `target` (an http base URL); closed after each test. */
export async function startTlsFront(target: string): Promise<{ port: number; authorizations: string[] }> {
  const up = new URL(target);
  const authorizations: string[] = [];
  const server = createServer(
    {
      cert: readFileSync(GATEWAY_CERT),
      key: readFileSync(join(FIXTURE_TLS, 'gateway-key.pem')),
    },
    (req, res) => {
      authorizations.push(req.headers.authorization ?? '');
      const fwd = httpRequest(
        { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      fwd.on('error', () => res.writeHead(502).end());
      req.pipe(fwd);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfterTest(server);
  return { port: (server.address() as AddressInfo).port, authorizations };
}
