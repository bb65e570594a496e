import { GwError, UsageError } from '../../core/errors.js';
import { DEFAULT_SIM_TOKEN, type SimConfigInput } from '../../sim/config.js';
import type { LoggedRequest } from '../../sim/server.js';
import type { Context } from '../../cli/context.js';
import type { simFlags } from './index.js';
import type { Flags } from '../../cli/verb.js';
import { LOCAL_LIMITS, parseLocalJson, readLocalText } from '../../core/local-file.js';
import { asSimConfigInput, simConfigProblems } from '../../sim/config-check.js';
import { SimListenError, startSim } from '../../sim/server.js';

/** Reads and checks `--config` (exit 2 naming the file and the field on any problem). */
async function readSimConfig(path: string, signal: AbortSignal): Promise<SimConfigInput> {
  const text = await readLocalText(path, {
    flag: '--config',
    field: '--config',
    limit: LOCAL_LIMITS.document,
    signal,
  });
  const doc = parseLocalJson(text, { flag: '--config', path });
  const problems = simConfigProblems(doc);
  if (problems.length > 0) {
    throw new UsageError(`--config: ${path}: ${problems.join('; ')}`, { field: '--config' });
  }
  return asSimConfigInput(doc);
}

/** A port in use is exit 1 with a hint; a host that is no local address is exit 2. */
function simStartError(e: unknown): unknown {
  if (!(e instanceof SimListenError)) return e;
  if (e.reason === 'bad_host')
    return new UsageError(`host: ${e.message}`, { field: 'host', hint: 'use 127.0.0.1, ::1 or 0.0.0.0' });
  return new GwError(e.message, {
    code: e.reason === 'address_in_use' ? 'address_in_use' : 'listen_failed',
    hint:
      e.reason === 'address_in_use'
        ? 'another program (or gw sim) listens there: pass another --port, or --port 0 for a free one'
        : undefined,
  });
}

/**
 * The token and `try:` lines of the banner, whatever GW_TOKEN holds: every line gw prints is masked for the token
 * in GW_TOKEN, so when the full line would be masked (GW_TOKEN already holds the simulator's token, or a piece of
 * it) the `try:` line leaves GW_TOKEN out and says why in a shell comment: what is printed can always be pasted.
 */
export function banner(
  baseUrl: string,
  tokens: readonly string[],
  envToken: string,
  redact: (text: string) => string,
): string[] {
  const token = tokens[0] ?? DEFAULT_SIM_TOKEN;
  const full = [
    ...(tokens.includes(DEFAULT_SIM_TOKEN) ? [`default token: ${DEFAULT_SIM_TOKEN}`] : []),
    `try: GW_BASE_URL=${baseUrl} GW_TOKEN=${token} gw models`,
  ];
  if (!tokens.includes(envToken) && full.every((l) => redact(l) === l)) return full;
  const why = tokens.includes(envToken)
    ? 'GW_TOKEN already holds a token of this simulator'
    : "set GW_TOKEN to the simulator's token first (docs/simulator.md)";
  return [`try: GW_BASE_URL=${baseUrl} gw models  # ${why}`];
}

/** `--log`: one request answered, as a line (`-` for a missing value) or an NDJSON object with --json. */
function logLine(ctx: Context, r: LoggedRequest): void {
  const entry = {
    method: r.method,
    path: r.path,
    status: r.status ?? null,
    request_id: r.requestId,
    traceparent: r.traceparent ?? null,
  };
  void ctx.out.result(
    { request: entry },
    () =>
      ctx.out.line(
        `${entry.method} ${entry.path} ${entry.status ?? '-'} ${entry.request_id} traceparent ${entry.traceparent ?? '-'}`,
      ),
    { ndjson: true },
  );
}

/** Runs the simulator until Ctrl-C / SIGTERM. */
export default async function run(ctx: Context, opts: Flags<typeof simFlags>): Promise<number> {
  const port = opts.port;
  const input = opts.config !== undefined ? await readSimConfig(opts.config, ctx.signal) : {};
  // Flags win over the config file, which wins over the defaults.
  const host = opts.host ?? input.host ?? '127.0.0.1';
  const onRequest = opts.log === true ? (r: LoggedRequest) => logLine(ctx, r) : undefined;
  const sim = await startSim({ ...input, host, port: port ?? input.port ?? 8787, onRequest }).catch(
    (e: unknown) => {
      throw simStartError(e);
    },
  );
  const tokens = Object.keys(sim.sim.config.tokens);
  await ctx.out.result(
    { baseUrl: sim.baseUrl, cdnUrl: sim.cdnUrl, tokens: tokens.length },
    () => {
      ctx.out.line(`gw sim listening on ${sim.baseUrl} (CDN origin ${sim.cdnUrl})`);
      for (const l of banner(sim.baseUrl, tokens, ctx.io.env.GW_TOKEN ?? '', (t) => ctx.redactor.redact(t)))
        ctx.out.line(l);
      ctx.out.line('ready');
    },
    { ndjson: true },
  );
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await sim.close();
  ctx.out.note('gw sim stopped');
  return 0;
}
