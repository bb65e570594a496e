/**
 * Where the client's errors become the CLI's: an exit code and a hint for each. The client knows neither (it is a
 * library); hints that name gw commands or flags live here.
 */
import {
  AuthenticationError,
  ConnectionError,
  GatewayError,
  PermissionDeniedError,
  RequestValidationError,
  TimeoutError,
  UserAbortError,
} from '../client/errors.js';
import { hintFor } from '../contract/errors.js';
import { ExitCode, GwError, InterruptedError, TimeLimitError, UsageError } from './errors.js';

/** Hints for failures that never reached the gateway (README "Network errors"). */
const NETWORK_HINTS: Record<string, string> = {
  connection_refused:
    'nothing listens there: check --base-url (GW_BASE_URL, the profile) and the proxy settings (HTTPS_PROXY, NO_PROXY)',
  dns_failed:
    'check the host name in --base-url; behind a proxy set HTTPS_PROXY (the proxy resolves names) and check NO_PROXY',
  tls_certificate:
    'trust the gateway CA with --ca-file <pem> (or GW_CA_FILE, NODE_EXTRA_CA_CERTS) and check the host name in --base-url',
  tls_protocol: 'check the scheme in --base-url (https:// to a plain-http port?) and the proxy settings',
  proxy_failed:
    'check HTTPS_PROXY / HTTP_PROXY (the address; credentials as http://user:password@proxy:port) and NO_PROXY',
  timeout: 'raise --timeout (e.g. --timeout 2m) or check the gateway',
};

/** The exit code of a client error (README "Output and exit codes"). */
export function exitCodeOf(e: GatewayError): number {
  if (e instanceof AuthenticationError || e instanceof PermissionDeniedError) return ExitCode.config;
  if (e instanceof TimeoutError) return ExitCode.timeout;
  if (e instanceof UserAbortError) return ExitCode.interrupted;
  if (e instanceof RequestValidationError) return ExitCode.usage;
  // A name that does not resolve, a certificate not trusted, a proxy that refuses: settings to fix, not a
  // gateway that failed. A refused or dropped connection may pass (a restart): exit 1, like a 5xx.
  if (e instanceof ConnectionError && ['dns_failed', 'tls_failed', 'proxy_failed'].includes(e.code))
    return ExitCode.config;
  return ExitCode.failure;
}

/** The CLI's hint for a client error: the documented one for its code or status, else one for the failure. */
export function hintOf(e: GatewayError): string | undefined {
  if (e instanceof ConnectionError) {
    const key = e.code === 'tls_failed' ? `tls_${e.tls ?? 'certificate'}` : e.code;
    return NETWORK_HINTS[key] ?? e.hint;
  }
  if (e instanceof TimeoutError) return e.hint ?? NETWORK_HINTS.timeout;
  return e.hint ?? hintFor(e.code, e.status);
}

/** A client error as the CLI prints it (`error: code: message`, `request id:`, `hint:`) with its exit code. */
export class ClientFailure extends GwError {
  override readonly exitCode: number;
  readonly source: GatewayError;
  readonly status: number | undefined;
  constructor(source: GatewayError) {
    super(source.message, {
      code: source.code,
      requestId: source.requestId,
      hint: hintOf(source),
      cause: source,
    });
    this.exitCode = exitCodeOf(source);
    this.source = source;
    this.status = source.status;
  }
  override toJSON(): { error: Record<string, unknown> } {
    const doc = this.source.toJSON();
    // The gateway's own error object is printed unchanged; gw's own documents carry gw's hint.
    const own = (this.source.body as { error?: unknown } | undefined)?.error === undefined;
    if (own && this.hint !== undefined) doc.error.hint = this.hint;
    return doc;
  }
}

/** Any error as a GwError the CLI can print, or undefined for a bug (not an ordinary failure). */
export function toGwError(e: unknown): GwError | undefined {
  if (e instanceof GwError) return e;
  if (e instanceof TimeoutError)
    return new TimeLimitError(e.message, { requestId: e.requestId, hint: hintOf(e), cause: e });
  if (e instanceof UserAbortError) return new InterruptedError(e.message);
  if (e instanceof RequestValidationError)
    return new UsageError(e.message, { code: e.code, field: e.param, cause: e });
  if (e instanceof GatewayError) return new ClientFailure(e);
  return undefined;
}

/** True for a limit reached: the client's TimeoutError (a request, a wait) or the CLI's TimeLimitError. */
export function isTimeout(e: unknown): e is TimeLimitError | TimeoutError {
  return e instanceof TimeLimitError || e instanceof TimeoutError;
}

/** True for an interruption (Ctrl-C, an aborted signal). */
export function isInterrupted(e: unknown): e is InterruptedError | UserAbortError {
  return e instanceof InterruptedError || e instanceof UserAbortError;
}
