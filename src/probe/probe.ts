/**
 * The probe as a library: `runProbe(options)` runs the checklist (or every listed model) against a gateway and
 * returns the report `gw probe --json` prints. It prints nothing and writes no file: what a run tells on the way
 * (notes, each check's start and end, created tasks) goes to the sinks the caller hands it.
 */
import type { Exchange, GatewayClient } from '../client/gateway-client.js';
import { type AllModelsOptions, runAllModels } from './all-models.js';
import { type BaselineRun, compareWithBaseline, notCompared } from './baseline.js';
import { addSpend, type PriceTable } from '../contract/prices.js';
import type { Check } from './checks.js';
import {
  labelModels,
  planModels,
  recordSpend,
  runChecklist,
  selectChecks,
  summarize,
  type CheckRecord,
  type CreatedKind,
  type ProbeAsk,
  type ProbePlan,
  type ProbeReport,
  type Selection,
} from './runner.js';
import { type SloBounds, applySlo } from './slo.js';

/** Makes the client of one check; every exchange it makes must reach `onExchange` (the request-id rule). */
export type ClientFactory = (o: {
  validate: boolean;
  onExchange: (x: Exchange) => void;
}) => GatewayClient | Promise<GatewayClient>;

/** Where a run reports on the way; every sink is optional. */
export interface ProbeSinks {
  /** A note for a person (the video's list price before it is created). */
  note?(text: string): void;
  start?(check: Check): void;
  /** Live progress of a running check. */
  update?(check: Check, text: string): void;
  finish?(record: CheckRecord): void;
  /** A billable task was created (before any wait: a caller journals it). */
  created?(kind: CreatedKind, id: string, model: string, requestId: string | undefined): void;
}

/** `--all-models`: every listed model gets the cheapest request of its kind. */
export type AllModelsSettings = Pick<
  AllModelsOptions,
  'kinds' | 'skipGlobs' | 'bothStreamModes' | 'budget' | 'allowUnpriced' | 'probeImage' | 'rowTimeoutMs'
>;

/** What a probe run takes. Only `client` is required: the base checklist with the documents' models. */
export interface ProbeOptions {
  /** A client (each check gets its own view of it, sharing its connections) or a factory of one per check. */
  client: GatewayClient | ClientFactory;
  /** The gateway the report names (default: the client's base URL; required with a factory). */
  gateway?: string;
  /** Which checks run (`selectChecks`); default the six of the base checklist. */
  selection?: Selection;
  /** The models the checks use (`planModels`); default the documents' examples. */
  plan?: ProbePlan;
  /** Probe every listed model instead of the checklist. */
  allModels?: AllModelsSettings;
  /** A passing check that misses one of these bounds fails; one that misses only `warnSlo` is degraded. */
  slo?: SloBounds;
  warnSlo?: SloBounds;
  /** Limit of a video (or task) to end, ms (default 10 minutes). */
  videoTimeoutMs?: number;
  videoPoll?: { initialMs: number; maxMs: number };
  signal?: AbortSignal;
  /** Monotonic milliseconds (latencies) and the wall clock (the report's times). */
  clock?: { now(): number; date(): Date };
  sinks?: ProbeSinks;
  /** Awaited before a check's clock starts (an in-process simulator registers the routes it calls). */
  prepare?: (check: Check) => Promise<void>;
  /** Longest the other checks wait for the slow checks' first answers, ms. */
  headStartMs?: number;
  /**
   * Compare the run with a baseline (the report's `baseline`): the run to compare with, or, when there is none
   * (`--baseline last` with no comparable run), why; `tolerance` is the latency allowance, a fraction.
   */
  baseline?: { source: string; tolerance: number } & ({ run: BaselineRun } | { reason: string });
  /** --prices: each row's spend from the usage its answer reported, and the run's total per currency. */
  prices?: PriceTable;
}

/** Prices each row of a model the table prices from what its answer reported (`data.usage`, `data.images`). */
function priceRows(report: ProbeReport, prices: PriceTable): void {
  const total: NonNullable<ProbeReport['spend']> = {};
  for (const c of report.checks) {
    const s = recordSpend(c, prices);
    if (s === undefined) continue;
    c.spend = s;
    addSpend(total, s);
  }
  report.spend = total;
}

/** The checks and models of a checklist run: the options' own, else the six checks with the documents' models. */
function checklistOf(o: Pick<ProbeOptions, 'selection' | 'plan'>): { selection: Selection; plan: ProbePlan } {
  const selection = o.selection ?? selectChecks({ extended: false, only: [], skip: [] });
  return { selection, plan: o.plan ?? planModels({}, undefined, selection.run) };
}

/** What a run with these options asks for (the report's `asked`: only runs that asked the same are compared). */
export function askOf(o: Pick<ProbeOptions, 'selection' | 'plan' | 'allModels'>): ProbeAsk {
  if (o.allModels !== undefined) {
    return {
      mode: 'all-models',
      checks: [...o.allModels.kinds].sort(),
      bothStreamModes: o.allModels.bothStreamModes,
      skipModels: [...o.allModels.skipGlobs].sort(),
    };
  }
  const { selection, plan } = checklistOf(o);
  return {
    mode: 'checklist',
    checks: selection.listed
      .filter((c) => selection.run.has(c.id))
      .map((c) => c.id)
      .sort(),
    models: [...plan.models].sort(),
  };
}

/** Runs the probe once and returns its report (`exitCodeOf(report)` is the CLI's exit code). */
export async function runProbe(o: ProbeOptions): Promise<ProbeReport> {
  const source = o.client;
  const client = (c: { validate: boolean; onExchange: (x: Exchange) => void }): Promise<GatewayClient> =>
    Promise.resolve(typeof source === 'function' ? source(c) : source.derive(c));
  const gateway = o.gateway ?? (typeof source === 'function' ? undefined : source.baseUrl);
  if (gateway === undefined) throw new TypeError('runProbe: give `gateway` with a client factory');
  const s = o.sinks ?? {};
  const clock = o.clock;
  const common = {
    gateway,
    client,
    signal: o.signal ?? new AbortController().signal,
    videoPoll: o.videoPoll ?? { initialMs: 1000, maxMs: 15_000 },
    note: (text: string) => s.note?.(text),
    ...(s.created !== undefined ? { onCreated: s.created.bind(s) } : {}),
    ...(s.finish !== undefined ? { onFinish: s.finish.bind(s) } : {}),
    ...(clock !== undefined ? { now: () => clock.now(), clock: () => clock.date() } : {}),
  };
  const taskTimeoutMs = o.videoTimeoutMs ?? 600_000;
  let report: ProbeReport;
  if (o.allModels !== undefined) {
    report = await runAllModels({ ...common, ...o.allModels, taskTimeoutMs, prices: o.prices });
  } else {
    const { selection, plan } = checklistOf(o);
    report = await runChecklist({
      ...common,
      selection,
      plan,
      videoTimeoutMs: taskTimeoutMs,
      ...(o.prepare !== undefined ? { prepare: o.prepare } : {}),
      ...(o.headStartMs !== undefined ? { headStartMs: o.headStartMs } : {}),
      ...(s.start !== undefined ? { onStart: s.start.bind(s) } : {}),
      ...(s.update !== undefined ? { onUpdate: s.update.bind(s) } : {}),
    });
    labelModels(report, plan);
  }
  report.asked = askOf(o);
  if (o.slo !== undefined || o.warnSlo !== undefined) {
    applySlo(report.checks, o.slo, o.warnSlo);
    report.summary = summarize(report.checks);
    report.slo = {
      ...(o.slo !== undefined ? { fail: o.slo } : {}),
      ...(o.warnSlo !== undefined ? { warn: o.warnSlo } : {}),
    };
  }
  if (o.prices !== undefined) priceRows(report, o.prices);
  const b = o.baseline;
  if (b !== undefined) {
    report.baseline =
      'run' in b
        ? compareWithBaseline(b.run, report, b.tolerance)
        : notCompared(b.source, b.reason, b.tolerance);
  }
  return report;
}
