import { ExitCode, GwError } from '../core/errors.js';
import { hintFor } from '../contract/errors.js';

/** Everything known about one failed gateway exchange. */
export interface GatewayErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | undefined;
  upstreamRequestId?: string | undefined;
  type?: string | undefined;
  param?: string | undefined;
  hint?: string | undefined;
  /** The error body exactly as the gateway sent it (for `--json`). */
  body?: unknown;
  /** Retry-After of the answer, in milliseconds. */
  retryAfterMs?: number | undefined;
}

/** The gateway answered with an error (any of the four documented shapes). Exit 1. */
export class GatewayError extends GwError {
  readonly status: number;
  readonly upstreamRequestId: string | undefined;
  readonly type: string | undefined;
  readonly param: string | undefined;
  readonly body: unknown;
  retryAfterMs: number | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message, {
      code: init.code,
      requestId: init.requestId,
      hint: init.hint ?? hintFor(init.code, init.status),
    });
    this.status = init.status;
    this.upstreamRequestId = init.upstreamRequestId;
    this.type = init.type;
    this.param = init.param;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs;
  }

  override toJSON(): { error: Record<string, unknown> } {
    const b = this.body as { error?: unknown } | undefined;
    if (b !== null && typeof b === 'object' && typeof b.error === 'object' && b.error !== null) {
      return { error: b.error as Record<string, unknown> };
    }
    const doc = super.toJSON();
    doc.error.status = this.status;
    if (this.type !== undefined) doc.error.type = this.type;
    if (this.upstreamRequestId !== undefined) doc.error.upstream_request_id = this.upstreamRequestId;
    return doc;
  }
}

/** The gateway refused the token (401/403). Exit 3. */
export class AuthError extends GatewayError {
  override readonly exitCode: number = ExitCode.config;
}

/** A response parsed but did not match what we rely on. Exit 1; never silently accepted. */
export class ResponseShapeError extends GwError {
  readonly status: number;
  constructor(
    message: string,
    options: { status: number; requestId?: string | undefined; cause?: unknown; code?: string | undefined },
  ) {
    super(message, {
      code: options.code ?? 'response_shape',
      requestId: options.requestId,
      cause: options.cause,
      hint: 'the gateway answered in a shape the contract does not describe; report the request id',
    });
    this.status = options.status;
  }
}

/** The connection failed or dropped before a complete answer arrived. Exit 1. */
export class ConnectionError extends GwError {
  constructor(message: string, options: { requestId?: string | undefined; cause?: unknown } = {}) {
    super(message, { code: 'connection_error', requestId: options.requestId, cause: options.cause });
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function firstLine(text: string, max = 160): string {
  const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1];
  const line = (title ?? text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * Maps an error answer to a GatewayError. Understands the common §2.4 body, the beta task body,
 * the asset library's `ResponseMetadata.Error`, alpha's `{code != 0}`, the messages-style body,
 * and non-JSON answers (an HTML 502 page from a proxy).
 */
export function errorFromBody(
  status: number,
  text: string,
  headerRequestId: string | undefined,
): GatewayError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const make = (init: Omit<GatewayErrorInit, 'status'>): GatewayError => {
    const full = { status, ...init, requestId: init.requestId ?? headerRequestId };
    return status === 401 || status === 403 ? new AuthError(full) : new GatewayError(full);
  };
  if (body !== null && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    // common §2.4, beta tasks §7 and messages-style: {error: {...}}
    if (o.error !== null && typeof o.error === 'object') {
      const e = o.error as Record<string, unknown>;
      return make({
        code: str(e.code) ?? str(e.type) ?? `http_${status}`,
        message: str(e.message) ?? `HTTP ${status}`,
        requestId: str(e.request_id) ?? str(o.request_id),
        upstreamRequestId: str(e.upstream_request_id),
        type: str(e.type),
        param: str(e.param),
        body,
      });
    }
    // asset library: {ResponseMetadata: {RequestId, Error: {Code, Message}}}
    const meta = o.ResponseMetadata as Record<string, unknown> | undefined;
    if (meta !== null && typeof meta === 'object' && meta.Error !== null && typeof meta.Error === 'object') {
      const e = meta.Error as Record<string, unknown>;
      return make({
        code: str(e.Code) ?? `http_${status}`,
        message: str(e.Message) ?? `HTTP ${status}`,
        requestId: str(meta.RequestId),
        body: { error: { code: e.Code, message: e.Message, request_id: meta.RequestId } },
      });
    }
    // alpha: {code: non-zero, message, request_id}
    if (typeof o.code === 'number' && o.code !== 0) {
      return make({
        code: String(o.code),
        message: str(o.message) ?? `HTTP ${status}`,
        requestId: str(o.request_id),
        body: { error: { code: o.code, message: o.message, request_id: o.request_id } },
      });
    }
  }
  const snippet = text.trim().length > 0 ? `: ${firstLine(text)}` : '';
  return make({
    code: `http_${status}`,
    message: `HTTP ${status} with a body that is not a gateway error${snippet}`,
  });
}
