import type { Command } from 'commander';
import type { Exchange, GatewayClient } from '../client/gateway-client.js';
import { TraceContext, type RequestSpan } from '../client/trace.js';
import { readConfigFile, ConfigStore, type DefaultModelKind, type Profile } from '../core/config.js';
import { parsePositiveDuration } from '../core/duration.js';
import {
  checkHeader,
  checkOverride,
  headerRecord,
  isCredentialHeader,
  mergeHeaders,
  parseHeader,
  showHeader,
  type ExtraHeader,
} from '../core/headers.js';
import { ConfigError, UsageError } from '../core/errors.js';
import { Journal, type JournalEntry } from '../core/journal.js';
import { globalOptions } from './globals.js';
import { stateDir } from '../core/paths.js';
import type { Io } from '../ui/io.js';
import type * as InquirerPrompts from '@inquirer/prompts';

/** The @inquirer/prompts module. */
export type Prompts = typeof InquirerPrompts;
import { Output } from '../ui/output.js';
import { Progress } from '../ui/progress.js';
import { Redactor } from '../ui/redact.js';
import { hasControlChars } from '../ui/sanitize.js';
import { normalizeBaseUrl, BaseUrlError } from '../client/base-url.js';
import { LOCAL_LIMITS, readLocalText } from '../core/local-file.js';

/** The global flags of CLI.md, as commander parses them. */
export interface GlobalOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  validate: boolean;
  profile?: string | undefined;
  baseUrl?: string | undefined;
  timeout?: string | undefined;
  caFile?: string | undefined;
  /** `--header 'Name: value'`, in the order given. */
  header?: string[] | undefined;
  headerOverride?: boolean | undefined;
}

/** An extra header and where it came from. */
export type SourcedHeader = ExtraHeader & { source: 'flag' | 'env' | 'profile' };

/** Where a setting's value came from (`gw doctor` shows it). */
export type SettingSource = 'flag' | 'env' | 'profile' | 'config' | 'default' | 'unset';

/** Connection settings after precedence (flag > environment > profile > defaults). */
export interface Settings {
  profileName: string;
  profile: Profile;
  baseUrl: string | undefined;
  token: string | undefined;
  timeoutMs: number;
  /** Extra trusted CA certificates (PEM file): `--ca-file`, else GW_CA_FILE. */
  caFile: string | undefined;
  /** Extra request headers after precedence (per name: flag > GW_HEADERS > profile), each with its source. */
  headers: SourcedHeader[];
  /** The source of each setting. */
  sources: { profile: SettingSource; baseUrl: SettingSource; token: SettingSource; timeout: SettingSource };
  /** Every profile the config file has. */
  knownProfiles: string[];
}

function sourceOf(flag: unknown, env: unknown, profile: unknown): SettingSource {
  if (flag !== undefined) return 'flag';
  if (env !== undefined) return 'env';
  if (profile !== undefined) return 'profile';
  return 'unset';
}

/** Options of `ctx.client()`. */
export interface ClientRequirements {
  /** Default true: a missing token is a ConfigError (exit 3). */
  token?: boolean;
  /** Overrides the settings (the probe's `--sim`, `gw login`'s check). */
  baseUrl?: string;
  tokenValue?: string;
  validate?: boolean;
  /** Also told of every exchange (the probe records each answer's request id); `--verbose` still prints. */
  onExchange?: (x: Exchange) => void;
  /** Most connections to the gateway (`gw load` sizes its pool); default no limit. */
  connections?: number;
  /** The caller sends its own body (`gw api`): Content-Type and Accept from --header need no --header-override. */
  bodyHeaders?: boolean;
}

const DEFAULT_TIMEOUT_MS = 60_000;

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
}

/** The error for a profile that the config file does not have (exit 3: a configuration problem). */
export function unknownProfile(name: string, known: readonly string[], via: string): ConfigError {
  return new ConfigError(
    `profile "${name}" (from ${via}) does not exist; known profiles: ${known.length > 0 ? known.join(', ') : 'none'}`,
    {
      code: 'unknown_profile',
      hint: `create it with \`gw --profile ${name} login\` or \`gw --profile ${name} config set baseUrl <url>\``,
    },
  );
}

/** Everything a command handler needs; heavy pieces (client, prompts) are created on first use. */
export class Context {
  readonly out: Output;
  readonly progress: Progress;
  readonly redactor: Redactor;
  readonly signal: AbortSignal;
  #settings: Settings | undefined;
  /** The commander Command that runs (reports name the command line they came from). */
  command: Command | undefined;
  /** Set by commands that create the named profile (`gw --profile new login`): it need not exist yet. */
  creatingProfile = false;
  #clients: GatewayClient[] = [];
  /** The --ca-file text, read for the first client. */
  #ca: Promise<string | undefined> | undefined;
  #warnedHttp = false;
  /** The command's trace: every client's requests join it (made with the first client). */
  #trace: TraceContext | undefined;
  /** Told of every request the command's clients finish (`--otlp`). */
  #onSpan: ((s: RequestSpan) => void) | undefined;
  /** Run when the command ends, before the clients close (telemetry's bounded last flush). */
  readonly #onClose: Array<() => Promise<void>> = [];

  constructor(
    readonly io: Io,
    readonly globals: GlobalOptions,
    signal?: AbortSignal,
  ) {
    this.redactor = new Redactor();
    this.redactor.add(io.env.GW_TOKEN);
    const noColor = !globals.color || (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '');
    this.out = new Output(
      io,
      { json: globals.json, quiet: globals.quiet, verbose: globals.verbose, color: !noColor },
      this.redactor,
    );
    this.progress = new Progress(this.out);
    this.signal = signal ?? io.signal ?? new AbortController().signal;
  }

  /** True when questions may be asked: stdin and stderr are terminals and --json is off. */
  get interactive(): boolean {
    return this.io.stdin.isTTY === true && this.io.stderr.isTTY === true && !this.globals.json;
  }

  /** Resolved connection settings. */
  settings(): Settings {
    if (this.#settings) return this.#settings;
    const env = this.io.env;
    const file = readConfigFile(env);
    const envProfile = env.GW_PROFILE || undefined;
    const profileName = this.globals.profile ?? envProfile ?? file.current;
    const knownProfiles = Object.keys(file.profiles);
    // A profile named on the command line or in GW_PROFILE must exist: a typo would otherwise run with no
    // settings (or the environment's) and fail far from its cause. A missing `current` one is the fresh default.
    if (
      !this.creatingProfile &&
      (this.globals.profile !== undefined || envProfile !== undefined) &&
      !(profileName in file.profiles)
    ) {
      throw unknownProfile(
        profileName,
        knownProfiles,
        this.globals.profile !== undefined ? '--profile' : 'GW_PROFILE',
      );
    }
    const profile = file.profiles[profileName] ?? {};
    this.redactor.add(profile.token);
    const envTimeout = env.GW_TIMEOUT || undefined;
    const timeoutText = this.globals.timeout ?? envTimeout ?? profile.timeout;
    const envBase = env.GW_BASE_URL || undefined;
    const envToken = env.GW_TOKEN || undefined;
    const timeoutSource = sourceOf(this.globals.timeout, envTimeout, profile.timeout);
    this.#settings = {
      profileName,
      profile,
      baseUrl: this.globals.baseUrl ?? envBase ?? profile.baseUrl,
      token: envToken ?? profile.token,
      timeoutMs:
        timeoutText !== undefined ? parsePositiveDuration(timeoutText, '--timeout') : DEFAULT_TIMEOUT_MS,
      caFile: this.globals.caFile ?? (env.GW_CA_FILE || undefined),
      headers: this.#headers(profileName, profile),
      sources: {
        profile:
          this.globals.profile !== undefined
            ? 'flag'
            : envProfile !== undefined
              ? 'env'
              : file.current !== 'default'
                ? 'config'
                : 'default',
        baseUrl: sourceOf(this.globals.baseUrl, envBase, profile.baseUrl),
        token: sourceOf(undefined, envToken, profile.token),
        timeout: timeoutSource === 'unset' ? 'default' : timeoutSource,
      },
      knownProfiles,
    };
    return this.#settings;
  }

  /**
   * The extra headers of this run: the profile's `headers`, then GW_HEADERS (one `Name: value` per line), then
   * `--header`, later ones winning per name. Each is checked (name, one-line value, no framing header); values of
   * headers that carry a credential are masked in every output from now on.
   */
  #headers(profileName: string, profile: Profile): SourcedHeader[] {
    const from = (list: ExtraHeader[], source: SourcedHeader['source']): SourcedHeader[] =>
      list.map((h) => ({ ...h, source }));
    const saved = Object.entries(profile.headers ?? {}).map(([name, value]) => {
      try {
        checkHeader(name, value, `headers.${name} of profile "${profileName}"`);
      } catch (e) {
        // A broken setting, not a bad value given now: exit 3, with the way out.
        throw new ConfigError((e as Error).message, { hint: `gw config unset headers.${name}` });
      }
      return { name, value };
    });
    const envText = this.io.env.GW_HEADERS ?? '';
    const env = envText
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
      .map((l) => parseHeader(l, 'GW_HEADERS'));
    const flags = (this.globals.header ?? []).map((t) => parseHeader(t, '--header'));
    const merged = mergeHeaders(
      from(saved, 'profile'),
      from(env, 'env'),
      from(flags, 'flag'),
    ) as SourcedHeader[];
    for (const h of merged) if (isCredentialHeader(h.name)) this.redactor.add(h.value);
    return merged;
  }

  /** The profile's `defaults.<kind>` model, if it has one. */
  defaultModel(kind: DefaultModelKind): string | undefined {
    const m = this.settings().profile.defaults?.[kind];
    return m !== undefined && m !== '' ? m : undefined;
  }

  /**
   * The model to use when `-m` is omitted: the profile's `defaults.<kind>`, else `fallback`; a usage error naming
   * the flag when neither exists.
   */
  model(given: string | undefined, kind: DefaultModelKind, fallback?: string): string {
    if (given !== undefined) return given;
    const fromProfile = this.defaultModel(kind);
    if (fromProfile !== undefined) return fromProfile;
    if (fallback !== undefined) return fallback;
    throw new UsageError(
      `model: give -m <model> (see \`gw models\`), or set a default with \`gw config set defaults.${kind} <model>\``,
      { field: 'model' },
    );
  }

  /** A GatewayClient for the resolved settings; `--verbose` prints one line per exchange. */
  async client(req: ClientRequirements = {}): Promise<GatewayClient> {
    const s = this.settings();
    const given = req.baseUrl ?? s.baseUrl;
    const token = req.tokenValue ?? s.token;
    if (given === undefined) {
      throw new ConfigError('no gateway base URL', {
        hint: 'pass --base-url, set GW_BASE_URL, or run `gw login` (try `gw probe --sim` for a local simulator)',
      });
    }
    let baseUrl: string;
    try {
      baseUrl = normalizeBaseUrl(given);
    } catch (e) {
      if (!(e instanceof BaseUrlError)) throw e;
      // A wrong scheme (ftp://, a missing https://) is a wrong value given; an unparseable one a broken setting;
      // credentials in the URL are refused wherever they come from: a wrong value given as a flag, a setting to
      // fix when they come from GW_BASE_URL or the profile.
      const setting = e.reason === 'userinfo' && req.baseUrl === undefined && s.sources.baseUrl !== 'flag';
      if (setting) {
        const hint =
          s.sources.baseUrl === 'env'
            ? 'set GW_BASE_URL to the address alone'
            : 'set it again without them: gw config set baseUrl <url>';
        throw new ConfigError(`base URL ${e.message}`, { hint });
      }
      if (e.reason === 'not_url') throw new ConfigError(`base URL ${e.message}`);
      throw new UsageError(`base URL ${e.message}`, { field: 'base-url' });
    }
    const url = new URL(baseUrl);
    // Read once: gw load asks for a client per virtual user.
    this.#ca ??= this.#readCaFile(s.caFile);
    const ca = await this.#ca;
    // A profile's header was checked when it was saved (gw config set needs --header-override for these too).
    checkOverride(
      s.headers.filter((h) => h.source !== 'profile'),
      {
        override: this.globals.headerOverride === true,
        body: req.bodyHeaders === true,
        from: (h) => (h.source === 'env' ? 'GW_HEADERS' : '--header'),
      },
    );
    // An Authorization header given with --header-override is the credential: no token needed then.
    const ownAuth = s.headers.some((h) => h.name.toLowerCase() === 'authorization');
    if ((req.token ?? true) && !ownAuth && (token === undefined || token === '')) {
      throw new ConfigError('no gateway token', {
        hint: 'set GW_TOKEN, or run `gw login` / `gw config set token --token-stdin`',
      });
    }
    this.redactor.add(token);
    this.#checkTokenLine(token, req, s.profileName);
    if (url.protocol === 'http:' && !isLoopback(url.hostname) && token !== undefined && !this.#warnedHttp) {
      this.#warnedHttp = true;
      this.out.warn(`the token travels unencrypted over http to ${url.host}; use https`);
    }
    if (this.globals.verbose && s.headers.length > 0 && this.#clients.length === 0) {
      this.out.verbose(`extra headers (to ${url.origin} only): ${s.headers.map(showHeader).join(', ')}`);
    }
    // The client brings undici (1.1 MB of the bundle): loaded when a command first asks for a client, so commands
    // that never talk to the gateway (config, history, completion, sim) and group help never pay for it.
    const { GatewayClient } = await import('../client/gateway-client.js');
    const client = new GatewayClient({
      trace: this.trace(),
      onSpan: this.#onSpan,
      baseUrl,
      token,
      headers: headerRecord(s.headers),
      timeoutMs: s.timeoutMs,
      ca,
      proxyEnv: this.io.env,
      validate: req.validate ?? this.globals.validate,
      userAgent: 'gw/0.1',
      connections: req.connections,
      onExchange:
        this.globals.verbose || req.onExchange !== undefined
          ? (x) => {
              req.onExchange?.(x);
              this.out.verbose(
                `${x.method} ${x.path} ${x.status ?? 'ERR'} ${x.ms}ms${x.requestId ? ` request-id ${x.requestId}` : ''}${x.attempt > 0 ? ` (retry ${x.attempt})` : ''}${x.error ? ` ${x.error}` : ''}`,
              );
            }
          : undefined,
    });
    this.#clients.push(client);
    return client;
  }

  /** A token is one line of printable characters: a control character or CR/LF would corrupt the header. */
  #checkTokenLine(token: string | undefined, req: ClientRequirements, profileName: string): void {
    if (token === undefined || !hasControlChars(token)) return;
    const from =
      req.tokenValue !== undefined
        ? 'the given token'
        : (this.io.env.GW_TOKEN ?? '') !== ''
          ? 'GW_TOKEN'
          : `the token of profile "${profileName}"`;
    const crlf = /[\r\n]/.test(token);
    throw new ConfigError(
      `${from} contains ${crlf ? 'a line break (CR/LF)' : 'a control character'}; a token is one line of printable characters`,
      {
        code: 'token_invalid',
        hint: crlf
          ? "the token was probably read from a file with Windows line endings: strip them (tr -d '\\r\\n') and set it again"
          : 'copy the token again, without control characters',
      },
    );
  }

  /** The command's one trace; `--verbose` prints its id, so the gateway's traces can be searched for it. */
  #newTrace(): TraceContext {
    const trace = new TraceContext();
    this.out.verbose(`trace id ${trace.traceId}`);
    return trace;
  }

  /** Sends every request of the clients made from now on to `sink` when it ends (`--otlp`). */
  observeRequests(sink: (s: RequestSpan) => void): void {
    this.#onSpan = sink;
  }

  /** Runs `f` when the command ends, after its output and before its clients close (telemetry's last push). */
  atClose(f: () => Promise<void>): void {
    this.#onClose.push(f);
  }

  /** The command's trace (the one every client's requests join). */
  trace(): TraceContext {
    return (this.#trace ??= this.#newTrace());
  }

  /** The PEM text of `--ca-file` / GW_CA_FILE; an unreadable file, one too large or with no certificate is exit 2. */
  async #readCaFile(path: string | undefined): Promise<string | undefined> {
    if (path === undefined) return undefined;
    const flag = this.globals.caFile !== undefined ? '--ca-file' : 'GW_CA_FILE';
    const text = await readLocalText(path, {
      flag,
      field: 'ca-file',
      limit: LOCAL_LIMITS.document,
      signal: this.signal,
    });
    if (!text.includes('-----BEGIN CERTIFICATE-----')) {
      throw new UsageError(`${flag}: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, {
        field: 'ca-file',
      });
    }
    return text;
  }

  /**
   * The limit of a wait (`gw … wait --timeout`, `create --wait`), or undefined for none: the verb's own
   * `--timeout` (`own`, written after the verb's name), else the global one (the request timeout, which is also
   * the limit of a wait that has no --timeout of its own).
   */
  waitLimitMs(own?: string): number | undefined {
    const text = own ?? this.globals.timeout;
    return text !== undefined ? parsePositiveDuration(text, '--timeout') : undefined;
  }

  /** The profile store, for commands that write settings. */
  config(): ConfigStore {
    return ConfigStore.open(this.io.env);
  }

  /**
   * The journal of created tasks and assets. Its state updates never fail a command: a journal that cannot be
   * written (disk full, read-only or missing state directory) is a warning, once.
   */
  journal(): Journal {
    const journal: Journal = new Journal(stateDir(this.io.env), {
      onWriteError: (e) => this.#journalWarning(e),
      onBadLine: (n) => this.out.warn(`${journal.path}: line ${n} is not a journal entry; skipped`),
    });
    return journal;
  }

  #journalWarned = false;
  #journalWarning(e: unknown): void {
    if (this.#journalWarned) return;
    this.#journalWarned = true;
    this.out.warn(`the journal could not be written: ${(e as Error).message}`);
  }

  /**
   * Journals a created task or asset (fsynced) with the profile and the gateway it was created on. Call it before
   * printing the id: a script killed right after still finds the id in `gw history`. It never throws: the thing
   * was created (and billed), so a journal that cannot be written is a warning naming the id, and the command
   * still prints the id and exits 0. Returns false when the journal was not written.
   */
  recordCreated(
    client: Pick<GatewayClient, 'baseUrl'>,
    entry: Omit<JournalEntry, 'createdAt' | 'profile' | 'baseUrl'>,
  ): boolean {
    let profile: string | undefined;
    try {
      profile = this.settings().profileName;
    } catch {
      profile = undefined;
    }
    try {
      new Journal(stateDir(this.io.env)).record({ ...entry, profile, baseUrl: client.baseUrl });
      return true;
    } catch (e) {
      this.#journalWarned = true;
      const what = entry.kind === 'beta-asset' ? 'asset' : entry.kind === 'video' ? 'video' : 'task';
      this.out.warn(
        `${what} ${entry.id} was created, but the journal could not be written (gw history will not list it): ${(e as Error).message}`,
      );
      return false;
    }
  }

  /** @inquirer/prompts, loaded on first use, bound to this context's streams. */
  async prompts(): Promise<Prompts> {
    return import('@inquirer/prompts');
  }

  /** Runs the telemetry's last flush, then closes every client this context opened. */
  async close(): Promise<void> {
    for (const f of this.#onClose.splice(0)) await f();
    this.out.flush();
    await Promise.all(this.#clients.map((c) => c.close()));
  }
}

/** A command handler: receives the context and commander's arguments; returns the exit code (default 0). */
export type Handler<A extends unknown[]> = (ctx: Context, ...args: A) => Promise<number | void>;

/** Shared by every command factory: builds the context and reports the exit code back to main(). */
export interface Runtime {
  io: Io;
  /** Wraps a handler as a commander action. */
  action<A extends unknown[]>(handler: Handler<A>): (...args: unknown[]) => Promise<void>;
}

/** Creates the runtime for one main() call. */
export function createRuntime(
  io: Io,
  signal: AbortSignal,
  hooks: { onContext: (ctx: Context) => void; onExit: (code: number) => void },
): Runtime {
  return {
    io,
    action<A extends unknown[]>(handler: Handler<A>) {
      return async (...args: unknown[]) => {
        const cmd = args[args.length - 1] as Command;
        const globals = globalOptions(cmd);
        const ctx = new Context(io, globals, signal);
        hooks.onContext(ctx);
        try {
          const code = await handler(ctx, ...(args.slice(0, -1) as A));
          hooks.onExit(code ?? 0);
        } finally {
          await ctx.close();
        }
      };
    },
  };
}
