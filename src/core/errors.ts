/**
 * The error model of gw. Every failure that reaches the user is a GwError carrying its exit code
 * (CLI.md "Exit codes"), a short machine code, and optionally a request id and a documented hint.
 */

/** Exit codes of CLI.md. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  config: 3,
  timeout: 4,
  interrupted: 130,
  /** SIGTERM (128 + 15), as shells report a terminated process. */
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One of several problems an error reports (a batch file's bad lines): where, the field, and the rule. */
export interface ErrorDetail {
  line?: number | undefined;
  custom_id?: string | undefined;
  field: string;
  rule: string;
}

/** A detail as one line of text: `line 3 (fox): body.seconds: must be 4, 8 or 12`. */
export function detailText(d: ErrorDetail): string {
  const where =
    d.line !== undefined ? `line ${d.line}${d.custom_id !== undefined ? ` (${d.custom_id})` : ''}: ` : '';
  return `${where}${d.field}: ${d.rule}`;
}

/** Fields every GwError can carry besides its message. */
export interface GwErrorOptions {
  code?: string | undefined;
  hint?: string | undefined;
  requestId?: string | undefined;
  cause?: unknown;
  /** Every problem, when the error reports several (`error.details` with --json, one line each otherwise). */
  details?: readonly ErrorDetail[] | undefined;
  /** Problems beyond the details listed (a bounded list of a huge input). */
  detailsOmitted?: number | undefined;
}

/** Base class: an error that knows its exit code and how to print itself. */
export class GwError extends Error {
  readonly exitCode: number = ExitCode.failure;
  readonly code: string;
  readonly hint: string | undefined;
  readonly requestId: string | undefined;
  readonly details: readonly ErrorDetail[] | undefined;
  readonly detailsOmitted: number;

  constructor(message: string, options: GwErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? 'error';
    this.hint = options.hint;
    this.requestId = options.requestId;
    this.details = options.details;
    this.detailsOmitted = options.detailsOmitted ?? 0;
  }

  /** The `{"error": …}` document printed with `--json`. */
  toJSON(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.requestId !== undefined) error.request_id = this.requestId;
    if (this.hint !== undefined) error.hint = this.hint;
    if (this.details !== undefined) error.details = this.details;
    if (this.detailsOmitted > 0) error.details_omitted = this.detailsOmitted;
    return { error };
  }
}

/** Invalid input: bad flags or a value that breaks a contract rule. Nothing was sent. Exit 2. */
export class UsageError extends GwError {
  override readonly exitCode: number = ExitCode.usage;
  /** The field the rule is about, e.g. `seconds` or `content[1].role`. */
  readonly field: string | undefined;
  constructor(message: string, options: GwErrorOptions & { field?: string | undefined } = {}) {
    super(message, { code: 'invalid_input', ...options });
    this.field = options.field;
  }
  override toJSON(): { error: Record<string, unknown> } {
    const doc = super.toJSON();
    if (this.field !== undefined) doc.error.param = this.field;
    return doc;
  }
}

/** Missing or unusable configuration (no base URL, no token). Exit 3. */
export class ConfigError extends GwError {
  override readonly exitCode: number = ExitCode.config;
  constructor(message: string, options: GwErrorOptions = {}) {
    super(message, { code: 'config', ...options });
  }
}

/**
 * A wait or request ran past its limit. Exit 4. (The client's own `TimeoutError` is a GatewayError the CLI maps
 * to this one; the names differ so an import of the wrong one cannot silently break `instanceof`.)
 */
export class TimeLimitError extends GwError {
  override readonly exitCode: number = ExitCode.timeout;
  constructor(message: string, options: GwErrorOptions = {}) {
    super(message, { code: 'timeout', ...options });
  }
}

/** The user pressed Ctrl-C (or the process got SIGINT/SIGTERM). Exit 130. */
export class InterruptedError extends GwError {
  override readonly exitCode: number = ExitCode.interrupted;
  constructor(message = 'interrupted', options: GwErrorOptions = {}) {
    super(message, { code: 'interrupted', ...options });
  }
}

/**
 * A task the command waited for reached a failed terminal state (failed, cancelled, expired). Exit 1. The client's
 * `TaskFailedError` is the library's; this one carries the CLI's hints (which name gw commands).
 */
export class TaskNotSucceededError extends GwError {
  readonly state: string;
  readonly taskId: string;
  constructor(message: string, options: GwErrorOptions & { state: string; taskId: string }) {
    super(message, { code: options.code ?? `task_${options.state}`, ...options });
    this.state = options.state;
    this.taskId = options.taskId;
  }
}

/** True when `e` is an AbortError raised by a cancelled signal. */
export function isAbortError(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || (e as { code?: unknown }).code === 'ABORT_ERR');
}
