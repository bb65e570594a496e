import {
  betaTaskCreatedSchema,
  betaTaskListQuerySchema,
  betaTaskListSchema,
  betaTaskSchema,
  checkBetaTaskCreate,
  isBetaTerminal,
  type BetaTask,
  type BetaTaskCreated,
  type BetaTaskList,
  type HostResolver,
  type PreparedBetaTask,
} from '../../contract/beta.js';
import { requireValid, violationError } from '../validation.js';
import { poll, pollRequestTimeout, type PollOptions } from '../poll.js';
import type { ApiResult, GatewayClient } from '../gateway-client.js';
import * as dns from 'node:dns/promises';

/** beta-tasks-assets.md §4.1: the task endpoints (the `/beta` prefix of the gateway + the native `v3` path). */
export const BETA_TASKS_PATH = '/beta/api/v3/contents/generations/tasks';

/** Resolves a host name with the system resolver (every address, IPv4 and IPv6). */
export async function resolveHost(host: string): Promise<string[]> {
  const answers = await dns.lookup(host, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}

/** A resolver that asks `resolve` once per host (a batch checks thousands of bodies naming the same hosts). */
export function cachingResolver(resolve: HostResolver = resolveHost): HostResolver {
  const seen = new Map<string, Promise<string[]>>();
  return (host) => {
    if (!seen.has(host)) seen.set(host, resolve(host));
    return seen.get(host) as Promise<string[]>;
  };
}

/**
 * Checks a create body against every rule of §2.4 and §6 (DNS for callback_url with `resolve`): the body to send
 * (`CallbackURL` renamed, `Asset://` normalised), its public model and non-blocking warnings, or a
 * RequestValidationError naming the field and the rule (with the documented code, e.g. `invalid_duration`).
 * `create` calls it when the client validates; a program that must refuse bad input before it has a client (a
 * dry run) calls it itself and then sends with a client built with `validate: false`.
 */
export async function prepareCreate(
  body: unknown,
  resolve: HostResolver = resolveHost,
): Promise<PreparedBetaTask> {
  const r = await checkBetaTaskCreate(body, resolve);
  if (r.ok) return r.value;
  throw violationError(r.violation, { documentedCode: true });
}

/** Options of `create`. */
export interface BetaTaskCreateOptions {
  signal?: AbortSignal | undefined;
  /** DNS for the callback_url rule (§6 rule 3); injectable so tests never touch the network. */
  resolve?: HostResolver | undefined;
  /** Non-blocking findings (e.g. execution_expires_after outside the usual range). */
  onWarning?: ((text: string) => void) | undefined;
}

/**
 * `POST …/tasks` (§4.1): checks every rule of §2.4 and §6 first (unless `client.validate` is false), sends the
 * body with `CallbackURL` renamed and `Asset://` normalised, and returns `{id}`. Never retried (a retry bills twice).
 */
export async function create(
  client: GatewayClient,
  body: unknown,
  o: BetaTaskCreateOptions = {},
): Promise<ApiResult<BetaTaskCreated>> {
  let send = body;
  if (client.validate) {
    const prepared = await prepareCreate(body, o.resolve ?? resolveHost);
    for (const w of prepared.warnings) o.onWarning?.(w);
    send = prepared.body;
  }
  return client.request({
    method: 'POST',
    path: BETA_TASKS_PATH,
    body: send,
    schema: betaTaskCreatedSchema,
    signal: o.signal,
  });
}

/** `GET …/tasks/{task_id}` (§4.1): the task record of §2.5. */
export async function retrieve(
  client: GatewayClient,
  id: string,
  o: {
    signal?: AbortSignal | undefined;
    timeoutMs?: number | undefined;
    /** Automatic retries (default the client's); `wait` passes 0 and absorbs failures itself. */
    retries?: number | undefined;
  } = {},
): Promise<ApiResult<BetaTask>> {
  return client.request({
    method: 'GET',
    path: `${BETA_TASKS_PATH}/${encodeURIComponent(id)}`,
    schema: betaTaskSchema,
    signal: o.signal,
    timeoutMs: o.timeoutMs,
    retries: o.retries,
  });
}

/** List parameters (§4.1); `taskIds` go out comma-separated as the document writes them. */
export interface BetaTaskListParams {
  page?: number | undefined;
  pageSize?: number | undefined;
  status?: string | undefined;
  model?: string | undefined;
  taskIds?: readonly string[] | undefined;
}

/** `GET …/tasks` (§4.1): `{items, total}` for the current tenant. */
export async function list(
  client: GatewayClient,
  p: BetaTaskListParams = {},
  o: { signal?: AbortSignal | undefined } = {},
): Promise<ApiResult<BetaTaskList>> {
  const query = {
    page_num: p.page,
    page_size: p.pageSize,
    'filter.status': p.status,
    'filter.model': p.model,
    'filter.task_ids': p.taskIds !== undefined && p.taskIds.length > 0 ? [...p.taskIds] : undefined,
  };
  if (client.validate) requireValid(betaTaskListQuerySchema, query);
  return client.request({
    method: 'GET',
    path: BETA_TASKS_PATH,
    query: { ...query, 'filter.task_ids': query['filter.task_ids']?.join(',') },
    schema: betaTaskListSchema,
    signal: o.signal,
  });
}

/**
 * `DELETE …/tasks/{task_id}` (§3, §4.1): a queued task becomes cancelled; a finished one is hidden from the
 * tenant (audit and billing kept); a running one is refused with 409 `InvalidAction.RunningTaskDeletion`.
 */
export async function remove(
  client: GatewayClient,
  id: string,
  o: { signal?: AbortSignal | undefined } = {},
): Promise<ApiResult<unknown>> {
  return client.request({
    method: 'DELETE',
    path: `${BETA_TASKS_PATH}/${encodeURIComponent(id)}`,
    signal: o.signal,
  });
}
export { remove as delete };

/** Options of `wait`: the poll schedule and hooks (clock and sleep injectable). */
export type BetaTaskWaitOptions = Omit<PollOptions<BetaTask>, 'fetch' | 'done'> & {
  /** Per-request limit (default: the client's); each poll is also bounded by the time left. */
  requestTimeoutMs?: number | undefined;
};

/** Polls a task until a terminal status of §3 (exponential backoff with jitter, 2 s to 30 s by default). */
export async function wait(
  client: GatewayClient,
  id: string,
  o: BetaTaskWaitOptions = {},
): Promise<BetaTask> {
  const now = o.now ?? Date.now;
  const deadline = o.timeoutMs !== undefined ? now() + o.timeoutMs : undefined;
  const { requestTimeoutMs, ...rest } = o;
  return poll({
    initialMs: 2000,
    maxMs: 30_000,
    ...rest,
    // Each request is bounded by the request timeout and the time left, and never retried by the client: the
    // poll absorbs transient errors within its own limit (a client retry's sleep could carry the wait past
    // --timeout).
    fetch: async (signal) => {
      const timeoutMs = pollRequestTimeout(deadline, now(), requestTimeoutMs);
      return (await retrieve(client, id, { signal, timeoutMs, retries: 0 })).data;
    },
    done: (t) => isBetaTerminal(t.status),
  });
}
