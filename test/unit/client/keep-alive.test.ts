/**
 * A kept-alive connection the server closes while gw sends on it (the server's idle limit ran out as the request
 * left). An idempotent request is sent again on a new connection; a POST is not (the server may have read it: a
 * create would run twice) and fails as a dropped connection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../src/client/gateway-client.js';
import { ConnectionError } from '../../../src/client/errors.js';
import { closeAfterTest } from '../../helpers/servers.js';

/** A server that answers the first request of each connection and drops the connection on the second. */
async function droppingServer(): Promise<{ baseUrl: string; seen: string[]; sockets: Set<Socket> }> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const served = new WeakMap<Socket, number>();
  const server = closeAfterTest(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(req.method ?? '');
      sockets.add(req.socket);
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      req.resume();
      req.on('end', () => {
        if (n > 1) {
          req.socket.destroy();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-gateway-request-id': `r${seen.length}` });
        res.end('{"object":"list","data":[]}');
      });
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, sockets };
}

// One connection: the second request goes on the first one's kept-alive connection, never on a fresh one.
const client = (baseUrl: string): GatewayClient =>
  new GatewayClient({ baseUrl, token: 'sk-keepalive-test', connections: 1, sleep: async () => undefined });

describe('a kept-alive connection closed by the server', () => {
  it('a GET on it is sent again on a new connection and succeeds', async () => {
    const s = await droppingServer();
    const c = client(s.baseUrl);
    try {
      await c.request({ method: 'GET', path: '/v1/models' });
      const second = await c.request({ method: 'GET', path: '/v1/models' });
      expect(second.status).toBe(200);
      expect(s.seen).toEqual(['GET', 'GET', 'GET']);
      expect(s.sockets.size).toBe(2);
    } finally {
      await c.close();
    }
  });

  it('a POST on it is not sent again: a connection_error, and the server saw it once', async () => {
    const s = await droppingServer();
    const c = client(s.baseUrl);
    try {
      await c.request({ method: 'GET', path: '/v1/models' });
      const err = await c
        .request({ method: 'POST', path: '/v1/chat/completions', body: {} })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toBe('connection_error');
      expect(s.seen).toEqual(['GET', 'POST']);
    } finally {
      await c.close();
    }
  });
});
