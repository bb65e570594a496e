import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MODEL_KINDS, readConfigFile } from '../../core/config.js';
import { ExitCode, GwError } from '../../core/errors.js';
import { configDir, stateDir } from '../../core/paths.js';
import { autoShard } from '../../core/shard.js';
import { redactToken } from '../../ui/redact.js';
import type { Context, Settings } from '../../cli/context.js';
import type { doctorFlags } from './index.js';
import type { Flags } from '../../cli/verb.js';
import { maskUserinfo } from '../../client/base-url.js';
import * as models from '../../client/resources/models.js';

/** The result of one check. */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** What failing this check means for the exit code (1 or 3). */
  exit?: number;
}

const MIN_NODE = [20, 18, 1] as const;
/** Beyond this difference between this machine's clock and the gateway's `Date`, doctor warns. */
const SKEW_WARN_MS = 60_000;
const PROXY_VARS = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

function nodeOk(version: string): boolean {
  const parts = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const a = parts[i] ?? 0;
    const b = MIN_NODE[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

function writable(dir: string): boolean {
  // The directory itself, or the closest parent that exists (gw creates the rest).
  let d = dir;
  while (!existsSync(d)) {
    const parent = join(d, '..');
    if (parent === d) return false;
    d = parent;
  }
  try {
    accessSync(d, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function header(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name] ?? h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Asks the gateway for `/v1/models`: reachability, token, clock skew. */
async function gatewayChecks(ctx: Context, s: Settings): Promise<DoctorCheck[]> {
  if (s.baseUrl === undefined) {
    return [
      {
        name: 'gateway',
        status: 'fail',
        detail: 'no base URL: pass --base-url, set GW_BASE_URL, or run `gw login`',
        exit: ExitCode.config,
      },
    ];
  }
  const started = Date.now();
  try {
    const client = await ctx.client({ token: false });
    const res = await models.list(client, { signal: ctx.signal });
    const ms = Date.now() - started;
    const checks: DoctorCheck[] = [
      { name: 'gateway', status: 'ok', detail: `${client.baseUrl} answered in ${ms} ms` },
    ];
    checks.push(
      s.token === undefined
        ? {
            name: 'token',
            status: 'fail',
            detail: 'no token: set GW_TOKEN or run `gw login`',
            exit: ExitCode.config,
          }
        : { name: 'token', status: 'ok', detail: `accepted (${res.data.data.length} models visible)` },
    );
    const date = header(res.headers, 'date');
    const at = date !== undefined ? Date.parse(date) : NaN;
    if (Number.isFinite(at)) {
      // The Date header has 1 s resolution and was stamped during the exchange: compare with its midpoint.
      const skew = started + ms / 2 - at;
      const text = `${skew >= 0 ? 'this machine is ahead by' : 'this machine is behind by'} ${Math.round(Math.abs(skew) / 1000)} s`;
      checks.push({
        name: 'clock',
        status: Math.abs(skew) > SKEW_WARN_MS ? 'warn' : 'ok',
        detail: Math.abs(skew) > SKEW_WARN_MS ? `${text}; expiry times shown by gw will be off` : text,
      });
    } else {
      checks.push({ name: 'clock', status: 'warn', detail: 'the gateway sent no Date header' });
    }
    return checks;
  } catch (e) {
    if (e instanceof GwError && e.exitCode === ExitCode.interrupted) throw e;
    const status = (e as { status?: unknown }).status;
    const msg = e instanceof Error ? e.message : String(e);
    if (typeof status === 'number') {
      // The gateway answered: reachable; the answer says what is wrong with the token.
      const auth = status === 401 || status === 403;
      return [
        { name: 'gateway', status: 'ok', detail: `${maskUserinfo(s.baseUrl)} answered HTTP ${status}` },
        {
          name: 'token',
          status: 'fail',
          detail: auth ? `rejected: ${msg}` : `GET /v1/models failed: ${msg}`,
          exit: auth ? ExitCode.config : ExitCode.failure,
        },
      ];
    }
    const exit = e instanceof GwError ? e.exitCode : ExitCode.failure;
    return [
      {
        name: 'gateway',
        status: 'fail',
        detail: `${maskUserinfo(s.baseUrl)} cannot be reached: ${msg}`,
        exit: exit === ExitCode.config || exit === ExitCode.usage ? exit : ExitCode.failure,
      },
    ];
  }
}

/**
 * The shard `--shard auto` takes here, and from where (GW_SHARD or a scheduler's variables). Variables that do
 * not add up (an index without its count, or outside it) fail the check: `--shard auto` would exit 2.
 */
function shardCheck(env: Record<string, string | undefined>): {
  check: DoctorCheck;
  shard: { shard: string | null; source: string | null };
} {
  try {
    const r = autoShard(env);
    if (r === undefined) {
      const detail = 'none (no GW_SHARD, and not a task of an array or indexed job)';
      return { check: { name: 'shard', status: 'ok', detail }, shard: { shard: null, source: null } };
    }
    const shard = `${r.k}/${r.n}`;
    const check: DoctorCheck = { name: 'shard', status: 'ok', detail: `${shard} from ${r.source}` };
    return { check, shard: { shard, source: r.source } };
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    const check: DoctorCheck = { name: 'shard', status: 'fail', detail, exit: ExitCode.config };
    return { check, shard: { shard: null, source: null } };
  }
}

/** The checks that need no network: Node, the config file, the state directory, the profile, the token. */
function localChecks(ctx: Context): {
  checks: DoctorCheck[];
  s: Settings | undefined;
  cfgFile: string;
  state: string;
} {
  const checks: DoctorCheck[] = [];
  const env = ctx.io.env;
  const node = process.version;
  checks.push(
    nodeOk(node)
      ? { name: 'node', status: 'ok', detail: node }
      : {
          name: 'node',
          status: 'fail',
          detail: `${node}: gw needs Node.js >= ${MIN_NODE.join('.')}`,
          exit: ExitCode.failure,
        },
  );
  const cfgFile = join(configDir(env), 'config.json');
  const state = stateDir(env);
  let s: Settings | undefined;
  try {
    readConfigFile(env);
    checks.push({
      name: 'config',
      status: 'ok',
      detail: existsSync(cfgFile) ? cfgFile : `${cfgFile} (not created yet)`,
    });
  } catch (e) {
    checks.push({
      name: 'config',
      status: 'fail',
      detail: (e as Error).message,
      exit: ExitCode.config,
    });
  }
  checks.push(
    writable(state)
      ? { name: 'state', status: 'ok', detail: `${state} (journal.jsonl, models cache)` }
      : {
          name: 'state',
          status: 'warn',
          detail: `${state} is not writable: created ids cannot be journaled`,
        },
  );
  try {
    s = ctx.settings();
    checks.push({ name: 'profile', status: 'ok', detail: `${s.profileName} (${s.sources.profile})` });
  } catch (e) {
    checks.push({
      name: 'profile',
      status: 'fail',
      detail: e instanceof Error ? e.message : String(e),
      exit: e instanceof GwError ? e.exitCode : ExitCode.config,
    });
  }
  if (s !== undefined && s.token === undefined) {
    checks.push({
      name: 'token',
      status: 'fail',
      detail: 'no token: set GW_TOKEN or run `gw login`',
      exit: ExitCode.config,
    });
  }
  return { checks, s, cfgFile, state };
}

/** The exit code of the checks: 3 for a configuration failure, 1 for any other, else 0. */
function exitOf(checks: readonly DoctorCheck[]): number {
  const failed = checks.filter((c) => c.status === 'fail');
  if (failed.some((c) => c.exit === ExitCode.config)) return ExitCode.config;
  return failed.length > 0 ? ExitCode.failure : ExitCode.ok;
}

/**
 * `gw doctor`: where every setting comes from, the paths gw uses, proxy variables, and whether the gateway answers,
 * accepts the token and agrees on the time, and the shard `--shard auto` takes. Exit 0 when nothing failed (warnings
 * allowed), 3 when the problem is configuration or authentication (or a scheduler's shard variables that do not add
 * up), 1 when the gateway cannot be reached or answers with another error.
 */
export default async function run(ctx: Context, opts: Flags<typeof doctorFlags>): Promise<number> {
  const env = ctx.io.env;
  const { checks, s, cfgFile, state } = localChecks(ctx);
  const shard = shardCheck(env);
  checks.push(shard.check);
  if (s !== undefined && opts.offline !== true) {
    const net = await gatewayChecks(ctx, s);
    checks.push(...net.filter((c) => !(c.name === 'token' && s.token === undefined)));
  }
  const proxy = Object.fromEntries(
    PROXY_VARS.filter((k) => (env[k] ?? '') !== '').map((k) => [k, maskUserinfo(env[k] as string)]),
  );
  const defaults = Object.fromEntries(
    DEFAULT_MODEL_KINDS.map((k) => [k, s?.profile.defaults?.[k]]).filter(([, v]) => v !== undefined),
  ) as Record<string, string>;
  const exitCode = exitOf(checks);
  const settings =
    s === undefined
      ? undefined
      : {
          profile: { value: s.profileName, source: s.sources.profile },
          baseUrl: {
            value: s.baseUrl !== undefined ? maskUserinfo(s.baseUrl) : null,
            source: s.sources.baseUrl,
          },
          token: {
            value: s.token !== undefined ? redactToken(s.token) : null,
            source: s.sources.token,
          },
          timeout: { value: `${s.timeoutMs} ms`, source: s.sources.timeout },
        };
  // Names only: a header's value may be a secret.
  const headers = (s?.headers ?? []).map((h) => ({ name: h.name, source: h.source }));
  const doc = {
    ok: exitCode === ExitCode.ok,
    exit_code: exitCode,
    settings: settings ?? null,
    known_profiles: s?.knownProfiles ?? [],
    headers,
    paths: { config: cfgFile, state },
    proxy,
    defaults,
    shard: shard.shard,
    node: process.version,
    checks: checks.map(({ name, status, detail }) => ({ name, status, detail })),
  };
  await ctx.out.result(doc, () => {
    const rows: Array<[string, string]> = [];
    if (settings !== undefined) {
      for (const [k, v] of Object.entries(settings)) rows.push([k, `${v.value ?? '(unset)'}  [${v.source}]`]);
      rows.push(['profiles', s?.knownProfiles.join(', ') || '(none saved)']);
      rows.push([
        'headers',
        headers.map((h) => `${h.name} [${h.source}]`).join(', ') || '(no extra headers)',
      ]);
    }
    rows.push(['config file', cfgFile], ['state dir', state]);
    for (const [k, v] of Object.entries(proxy)) rows.push([k, v]);
    if (Object.keys(proxy).length === 0) rows.push(['proxy', '(no proxy variables set)']);
    for (const [k, v] of Object.entries(defaults)) rows.push([`defaults.${k}`, v]);
    ctx.out.keyValue(rows);
    ctx.out.line();
    for (const c of checks)
      ctx.out.line(
        `${c.status === 'ok' ? 'ok  ' : c.status === 'warn' ? 'warn' : 'FAIL'}  ${c.name}: ${c.detail}`,
      );
  });
  return exitCode;
}
