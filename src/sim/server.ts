import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Capacity, CAPACITY_ROUTES } from './capacity.js';
import { Cdn } from './cdn.js';
import { resolveSimConfig, type FaultRule, type SimConfig, type SimConfigInput } from './config.js';
import {
  RequestTooLargeError,
  INVALID_JSON,
  SimReply,
  readBody,
  type ErrorShape,
  type SimRequest,
} from './http.js';
import { MAX_BODY_BYTES, keepRequestLogBounded } from './limits.js';
import { Router } from './router.js';
import { rng } from './rng.js';

/** One request as the simulator received it (tests assert on this log: e.g. "nothing was sent"). */
export interface LoggedRequest {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  requestId: string;
  /** When the request arrived (Unix ms, to the microsecond: the machine's one clock, comparable across processes). */
  arrivedUnixMs?: number;
  status?: number;
  /** The W3C `traceparent` header as received (a client's trace and span ids: join its traces to this log). */
  traceparent?: string | undefined;
}

/**
 * Options of startSim: the config shape plus a clock for tests, and optionally the route families to register
 * (default: every family; `gw probe --sim` registers only those its checks call, and loads no other route code).
 */
export type StartSimOptions = SimConfigInput & {
  now?: () => number;
  routes?: (sim: Sim) => void;
  /** Told of every logged request once its answer was sent (`gw sim --log`). */
  onRequest?: ((r: LoggedRequest) => void) | undefined;
};

/** A running simulator. */
export interface SimHandle {
  baseUrl: string;
  cdnUrl: string;
  requests: LoggedRequest[];
  sim: Sim;
  close(): Promise<void>;
}

/** The simulator's shared state: config, clock, random source, CDN, and one store per route family. */
export class Sim {
  readonly router = new Router();
  readonly requests: LoggedRequest[] = [];
  readonly cdn: Cdn;
  readonly random: () => number;
  readonly now: () => number;
  /** The capacity model of the text routes, when configured (`GET /sim/capacity` shows its counters). */
  readonly capacity: Capacity | undefined;
  readonly #stores = new Map<string, unknown>();
  readonly #faultHits = new Map<FaultRule, number>();
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  #requestCounter = 0;
  /** See StartSimOptions.onRequest. */
  onRequest: ((r: LoggedRequest) => void) | undefined;

  constructor(
    readonly config: SimConfig,
    now: () => number = Date.now,
  ) {
    this.now = now;
    this.random = rng(config.seed);
    this.cdn = new Cdn(now);
    this.cdn.faults = () => this.faultsFor('GET /cdn');
    this.capacity = config.capacity ? new Capacity(config.capacity, config.seed) : undefined;
    const capacity = this.capacity;
    if (capacity)
      this.router.add(
        'GET',
        '/sim/capacity',
        (req, reply) =>
          reply.json(
            200,
            capacity.stats(Number(req.query.get('since') ?? 0) || 0, req.query.get('stamps') === '1'),
          ),
        {
          auth: false,
        },
      );
  }

  /** A family's state, created on first use. */
  store<T>(key: string, init: () => T): T {
    if (!this.#stores.has(key)) this.#stores.set(key, init());
    return this.#stores.get(key) as T;
  }

  /** Adds a fault at run time (tests). */
  addFault(rule: FaultRule): void {
    this.config.faults.push(rule);
  }

  /** Removes every fault. */
  clearFaults(): void {
    this.config.faults.length = 0;
    this.#faultHits.clear();
  }

  /** True when a `vanish` fault names `model`: the model list leaves it out (whatever the fault's route). */
  vanished(model: string): boolean {
    return this.config.faults.some((f) => f.kind === 'vanish' && f.model === model);
  }

  /**
   * The faults that apply to one request of `route` (consumes `times`); `model`: the model the body names;
   * `stream`: whether the body asks for a stream.
   */
  faultsFor(route: string, model?: string, stream?: boolean): FaultRule[] {
    const out: FaultRule[] = [];
    for (const f of this.config.faults) {
      if (f.route !== '*' && f.route !== route) continue;
      if (f.model !== undefined && f.model !== model) continue;
      if (f.stream !== undefined && f.stream !== (stream === true)) continue;
      const hits = this.#faultHits.get(f) ?? 0;
      if (f.times !== undefined && hits >= f.times) continue;
      if (f.probability !== undefined && this.random() >= f.probability) continue;
      this.#faultHits.set(f, hits + 1);
      out.push(f);
    }
    return out;
  }

  /**
   * Takes one request from the token's bucket (config `rateLimit`, or the token's own). Returns undefined when
   * the request may pass, else the milliseconds until a request would be allowed (the 429's Retry-After).
   */
  rateLimited(token: string): number | undefined {
    const limit = this.config.tokens[token]?.rateLimit ?? this.config.rateLimit;
    if (limit === undefined || !(limit.requestsPerSecond > 0)) return undefined;
    const now = this.now();
    const burst = Math.max(1, limit.burst);
    const b = this.#buckets.get(token) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * limit.requestsPerSecond);
    b.at = now;
    this.#buckets.set(token, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil(((1 - b.tokens) / limit.requestsPerSecond) * 1000));
  }

  /** A new gateway request id. */
  nextRequestId(): string {
    return `req-sim-${(++this.#requestCounter).toString(36).padStart(6, '0')}`;
  }

  /**
   * A random id with a prefix (`video_…`, `cgt-…`). Unlike faults, ids are not seeded: a restarted simulator must
   * never hand out an id that a user's journal already holds from an earlier run.
   */
  id(prefix: string): string {
    const bytes = randomBytes(16);
    let s = '';
    for (const b of bytes) s += (b % 36).toString(36);
    return `${prefix}${s}`;
  }

  /** Handles one HTTP request: read and log it, then faults and refusals, else the route's handler. */
  async handle(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const arrived = performance.now();
    const url = new URL(req.url ?? '/', 'http://sim');
    const method = req.method ?? 'GET';
    const read = await readRequest(req, res);
    if (read === undefined) return;
    const { raw, body } = read;
    const requestId = this.nextRequestId();
    this.#log(res, {
      method,
      path: url.pathname,
      query: url.search,
      headers: req.headers,
      body,
      requestId,
      traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined,
      arrivedUnixMs: Math.round((performance.timeOrigin + arrived) * 1000) / 1000,
    });

    const m = this.router.match(method, url.pathname);
    const auth = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    const token = this.config.tokens[auth];
    const routeKey = 'route' in m ? `${m.route.method} ${m.route.pattern}` : `${method} ${url.pathname}`;
    const b = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    const named =
      typeof b.model === 'string' ? b.model : typeof b.model_name === 'string' ? b.model_name : '';
    const faults = this.faultsFor(routeKey, named, b.stream === true);
    const simReq: SimRequest = {
      method,
      path: url.pathname,
      route: routeKey,
      params: 'route' in m ? m.params : {},
      query: url.searchParams,
      headers: req.headers,
      rawBody: raw,
      body,
      token: auth,
      tenant: token?.tenant ?? '',
      canSee: (model) => token !== undefined && (token.models === '*' || token.models.includes(model)),
      hasOpened: (service) => token?.notOpened?.includes(service) !== true,
      requestId,
      extraKind: (model) => this.config.extraModels?.[model],
    };
    const reply = new SimReply(simReq, res, faults, this.config.timings.streamDelayMs);

    const latency = faults.find((f) => f.kind === 'latency');
    if (latency && !(req.headers.accept ?? '').includes('text/event-stream')) {
      await new Promise((r) => setTimeout(r, latency.ms ?? 1000));
    }
    const shape = 'route' in m ? m.route.shape : shapeOfPath(url.pathname);
    if (!('route' in m)) {
      reply.error(
        m.methodMismatch ? 405 : 404,
        m.methodMismatch ? 'method_not_allowed' : 'not_found',
        `no route for ${method} ${url.pathname}`,
        shape,
      );
      return;
    }
    if (m.route.auth && this.#refused(reply, shape, auth, token !== undefined)) return;
    if (this.#faulted(faults, { req, res, reply, shape, requestId, signal })) return;
    if (named !== '' && this.config.misconfiguredModels?.includes(named) === true && m.route.auth) {
      // Listed, but the channel that should serve it is missing: the gateway cannot route it.
      reply.error(404, 'model_not_found', `The model \`${named}\` has no available channel`, shape, {
        param: 'model',
      });
      return;
    }
    if (body === INVALID_JSON && method !== 'GET') {
      reply.error(400, 'invalid_request', 'body is not valid JSON', shape);
      return;
    }
    if (this.capacity && CAPACITY_ROUTES.has(routeKey)) {
      if (!(await this.capacity.admit(reply, res, shape, arrived, requestId))) return;
    }
    await m.route.handler(simReq, reply, signal);
  }

  /** Logs a request (the log stays bounded); its status is filled in when the answer is sent. */
  #log(res: ServerResponse, logged: LoggedRequest): void {
    this.requests.push(logged);
    keepRequestLogBounded(this.requests);
    res.on('finish', () => {
      logged.status = res.statusCode;
      this.onRequest?.(logged);
    });
  }

  /** Answers 401 for an unknown or missing token, 429 past the token's rate; true when it answered. */
  #refused(reply: SimReply, shape: ErrorShape, auth: string, known: boolean): boolean {
    if (!known) {
      reply.error(
        401,
        shape === 'alpha' ? '1002' : shape === 'asset' ? 'AuthenticationError' : 'invalid_api_key',
        auth === '' ? 'missing bearer token' : 'unknown token',
        shape,
        { type: 'authentication_error' },
      );
      return true;
    }
    const limitedMs = this.rateLimited(auth);
    if (limitedMs === undefined) return false;
    reply.error(429, shape === 'alpha' ? '1302' : 'rate_limit_exceeded', 'rate limit exceeded', shape, {
      type: 'rate_limit_error',
      headers: { 'retry-after': Math.ceil(limitedMs / 1000), 'retry-after-ms': limitedMs },
    });
    return true;
  }

  /** Answers with the first fault that replaces the answer (status, HTML 502, cut JSON, a stall); true if one did. */
  #faulted(
    faults: readonly FaultRule[],
    o: {
      req: IncomingMessage;
      res: ServerResponse;
      reply: SimReply;
      shape: ErrorShape;
      requestId: string;
      signal: AbortSignal;
    },
  ): boolean {
    const { req, res, reply, shape, requestId, signal } = o;
    for (const f of faults) {
      if (f.kind === 'vanish' && f.model !== undefined) {
        reply.error(
          404,
          'model_not_found',
          `The model \`${f.model}\` does not exist or is not visible to this token`,
          shape,
          {
            param: 'model',
          },
        );
        return true;
      }
      if (f.kind === 'status') {
        const status = f.status ?? 500;
        reply.error(
          status,
          status === 429 ? 'rate_limit_exceeded' : 'service_error',
          status === 429 ? 'rate limited (simulated)' : 'upstream failure (simulated)',
          shape,
          {
            headers: f.retryAfter !== undefined ? { 'retry-after': f.retryAfter } : {},
          },
        );
        return true;
      }
      if (f.kind === 'html502') {
        reply.send(
          502,
          Buffer.from(
            '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
          ),
          {
            'content-type': 'text/html',
          },
        );
        return true;
      }
      if (f.kind === 'malformed') {
        reply.send(200, Buffer.from('{"object": "list", "data": [ {"id": '), {
          'content-type': 'application/json',
        });
        return true;
      }
      if (f.kind === 'slow' && !(req.headers.accept ?? '').includes('text/event-stream')) {
        res.writeHead(200, { 'content-type': 'application/json', 'x-gateway-request-id': requestId });
        // The answer has begun (headers and request id out), then never finishes.
        res.flushHeaders();
        const t = setInterval(() => res.write(' '), f.ms ?? 1000);
        signal.addEventListener('abort', () => clearInterval(t), { once: true });
        res.on('close', () => clearInterval(t));
        return true;
      }
    }
    return false;
  }
}

/** The error shape of a path no route matches, from its family's prefix. */
function shapeOfPath(path: string): ErrorShape {
  if (path.startsWith('/beta/api')) return 'beta-task';
  if (path.startsWith('/beta')) return 'asset';
  if (path.startsWith('/alpha')) return 'alpha';
  return 'common';
}

/** Reads the body (parsed when it is JSON); a body past MAX_BODY_BYTES is answered 413 here (undefined). */
async function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ raw: Buffer; body: unknown } | undefined> {
  let raw: Buffer;
  try {
    raw = await readBody(req, MAX_BODY_BYTES);
  } catch (e) {
    if (!(e instanceof RequestTooLargeError)) throw e;
    res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
    res.end(
      JSON.stringify({
        error: { message: e.message, type: 'invalid_request_error', code: 'body_too_large' },
      }),
    );
    req.destroy();
    return undefined;
  }
  let body: unknown;
  if (raw.length > 0 && (req.headers['content-type'] ?? '').includes('json')) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = INVALID_JSON;
    }
  }
  return { raw, body };
}

/** Why the simulator could not listen: the port is taken, or the host is no address of this machine. */
export class SimListenError extends Error {
  constructor(
    message: string,
    readonly reason: 'address_in_use' | 'bad_host' | 'other',
    readonly host: string,
    readonly port: number,
  ) {
    super(message);
  }
}

function listenError(e: unknown, host: string, port: number, what: string): SimListenError {
  const code = (e as { code?: unknown }).code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new SimListenError(`the ${what} port ${where} is already in use`, 'address_in_use', host, port);
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EINVAL') {
    return new SimListenError(
      `cannot listen on ${host}: not an address of this machine`,
      'bad_host',
      host,
      port,
    );
  }
  return new SimListenError(`cannot listen on ${where}: ${(e as Error).message}`, 'other', host, port);
}

/**
 * Starts the simulator (gateway origin + CDN origin) on loopback. Port 0 picks free ports.
 * Used by `gw sim`, `gw probe --sim` and the tests.
 */
export async function startSim(options: StartSimOptions = {}): Promise<SimHandle> {
  const { now, routes, onRequest, ...input } = options;
  const config = resolveSimConfig(input);
  const sim = new Sim(config, now);
  sim.onRequest = onRequest;
  await sim.cdn.listen(config.host, config.cdnPort).catch((e: unknown) => {
    throw listenError(e, config.host, config.cdnPort, 'CDN origin');
  });
  if (routes) routes(sim);
  else (await import('./routes/index.js')).registerAllRoutes(sim);
  const ac = new AbortController();
  const server: Server = createServer((req, res) => {
    sim.handle(req, res, ac.signal).catch((e: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: `simulator bug: ${String(e)}`, type: 'server_error', code: 'internal' },
          }),
        );
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, resolve);
    });
  } catch (e) {
    // Nothing may stay listening when the start fails, or the process would never exit.
    await sim.cdn.close();
    throw listenError(e, config.host, config.port, 'gateway');
  }
  const a = server.address() as AddressInfo;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${a.port}`;
  return {
    baseUrl,
    cdnUrl: sim.cdn.baseUrl,
    requests: sim.requests,
    sim,
    async close() {
      ac.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sim.cdn.close();
    },
  };
}
