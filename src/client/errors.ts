/**
 * The client's errors, chosen from the HTTP status as the official SDKs do, all under GatewayError. The client
 * knows no exit codes and no command names: a program (gw's CLI) maps these to its own exit codes and hints.
 */

/** Everything known about one failed exchange. */
export interface GatewayErrorInit {
  /** HTTP status; undefined when no answer arrived (connection, DNS, TLS, timeout, interrupted). */
  status?: number | undefined;
  code: string;
  message: string;
  requestId?: string | undefined;
  upstreamRequestId?: string | undefined;
  type?: string | undefined;
  param?: string | undefined;
  /** A hint that names no program (the CLI adds its own by code). */
  hint?: string | undefined;
  /** The error body exactly as the gateway sent it (for `--json`). */
  body?: unknown;
  headers?: Record<string, string | string[] | undefined> | undefined;
  /** Retry-After of the answer, in milliseconds. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/** Base class of every error the client raises: status, code, request ids and headers of the exchange. */
export class GatewayError extends Error {
  readonly status: number | undefined;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly upstreamRequestId: string | undefined;
  readonly type: string | undefined;
  readonly param: string | undefined;
  readonly hint: string | undefined;
  readonly body: unknown;
  readonly headers: Record<string, string | string[] | undefined>;
  retryAfterMs: number | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.upstreamRequestId = init.upstreamRequestId;
    this.type = init.type;
    this.param = init.param;
    this.hint = init.hint;
    this.body = init.body;
    this.headers = init.headers ?? {};
    this.retryAfterMs = init.retryAfterMs;
  }

  /** The `{"error": …}` document: the gateway's own error object when it sent one. */
  toJSON(): { error: Record<string, unknown> } {
    const b = this.body as { error?: unknown } | undefined;
    if (b !== null && typeof b === 'object' && typeof b.error === 'object' && b.error !== null) {
      return { error: b.error as Record<string, unknown> };
    }
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.requestId !== undefined) error.request_id = this.requestId;
    if (this.status !== undefined) error.status = this.status;
    if (this.type !== undefined) error.type = this.type;
    if (this.param !== undefined) error.param = this.param;
    if (this.upstreamRequestId !== undefined) error.upstream_request_id = this.upstreamRequestId;
    if (this.hint !== undefined) error.hint = this.hint;
    return { error };
  }
}

/** 400. */
export class BadRequestError extends GatewayError {}
/** 401: the token was refused. */
export class AuthenticationError extends GatewayError {}
/** 403: the token may not use this resource. */
export class PermissionDeniedError extends GatewayError {}
/** 404. */
export class NotFoundError extends GatewayError {}
/** 409. */
export class ConflictError extends GatewayError {}
/** 422. */
export class UnprocessableEntityError extends GatewayError {}
/** 429. */
export class RateLimitError extends GatewayError {}
/** 5xx. */
export class InternalServerError extends GatewayError {}

/** @deprecated 401 or 403; use AuthenticationError / PermissionDeniedError. Kept for existing callers. */
export type AuthError = AuthenticationError | PermissionDeniedError;

/** What kind of network failure a ConnectionError is. */
export type ConnectionFailure =
  'connection_refused' | 'dns_failed' | 'tls_failed' | 'proxy_failed' | 'connection_error';

/** No complete answer: the connection was refused, the name did not resolve, TLS failed, or it dropped. */
export class ConnectionError extends GatewayError {
  /** host:port the failure is about (the gateway, a redirect target, or the proxy). */
  readonly host: string | undefined;
  /** For tls_failed: the certificate was not trusted, or the two sides spoke no common protocol. */
  readonly tls: 'certificate' | 'protocol' | undefined;
  constructor(
    message: string,
    o: {
      code?: ConnectionFailure | undefined;
      host?: string | undefined;
      tls?: 'certificate' | 'protocol' | undefined;
      requestId?: string | undefined;
      cause?: unknown;
    } = {},
  ) {
    super({ code: o.code ?? 'connection_error', message, requestId: o.requestId, cause: o.cause });
    this.host = o.host;
    this.tls = o.tls;
  }
}

/** An event stream that ended cleanly before its final event: the answer may be incomplete. */
export class TruncatedStreamError extends ConnectionError {}

/** No answer (or no next event, or no next bytes) within the time limit. */
export class TimeoutError extends GatewayError {
  constructor(message: string, o: { requestId?: string | undefined; cause?: unknown; hint?: string } = {}) {
    super({ code: 'timeout', message, ...o });
  }
}

/** The caller's AbortSignal fired. */
export class UserAbortError extends GatewayError {
  constructor(message = 'interrupted') {
    super({ code: 'interrupted', message });
  }
}

/** An answer arrived but does not match what the contract describes (or is too large to read). */
export class ResponseShapeError extends GatewayError {
  constructor(
    message: string,
    o: { status: number; requestId?: string | undefined; cause?: unknown; code?: string | undefined },
  ) {
    super({
      status: o.status,
      code: o.code ?? 'response_shape',
      message,
      requestId: o.requestId,
      cause: o.cause,
      hint: 'the gateway answered in a shape the contract does not describe; report the request id',
    });
  }
}

/** The class for an error status, as the official SDKs choose it. */
export function errorClassFor(status: number): new (init: GatewayErrorInit) => GatewayError {
  if (status === 400) return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 422) return UnprocessableEntityError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return InternalServerError;
  return GatewayError;
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
 * Maps an error answer to a GatewayError subclass chosen by status. Understands the common error body
 * (`{error: {...}}`, also the beta task and messages-style bodies), the asset library's `ResponseMetadata.Error`,
 * alpha's `{code != 0}`, and non-JSON answers (an HTML 502 page from a proxy).
 */
export function errorFromBody(
  status: number,
  text: string,
  headerRequestId: string | undefined,
  headers?: Record<string, string | string[] | undefined>,
): GatewayError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const Cls = errorClassFor(status);
  const make = (init: Omit<GatewayErrorInit, 'status'>): GatewayError =>
    new Cls({ status, ...init, headers, requestId: init.requestId ?? headerRequestId });
  if (body !== null && typeof body === 'object') {
    const o = body as Record<string, unknown>;
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

/**
 * A request body breaks a rule of the contract; nothing was sent. `field` (also `param`) names the field, e.g.
 * `content[1].role`, and `rule` says what the field must be; the message is `<field>: <rule>`. `code` is the
 * gateway's documented code for the rule when there is one (e.g. `invalid_duration`), else `invalid_input`.
 */
export class RequestValidationError extends GatewayError {
  readonly field: string;
  readonly rule: string;
  constructor(message: string, o: { field: string; code?: string | undefined; rule?: string | undefined }) {
    super({ code: o.code ?? 'invalid_input', message, param: o.field });
    this.field = o.field;
    this.rule = o.rule ?? message;
  }
}

/** A task reached a failed terminal state (failed, cancelled, expired). */
export class TaskFailedError extends GatewayError {
  readonly state: string;
  readonly taskId: string;
  constructor(
    message: string,
    o: {
      state: string;
      taskId: string;
      code?: string;
      requestId?: string | undefined;
      hint?: string | undefined;
    },
  ) {
    super({ code: o.code ?? `task_${o.state}`, message, requestId: o.requestId, hint: o.hint });
    this.state = o.state;
    this.taskId = o.taskId;
  }
}
