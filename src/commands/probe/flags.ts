/**
 * The flags of `gw probe` as one zod schema: every value is parsed here (durations, ports, SLOs, budgets, kinds,
 * check ids, URLs), and the rules between flags (`--kind` only with `--all-models`, `--webhook` only with
 * `--every`, …) are checked on the whole object, so a bad command line is exit 2 naming the flag as typed before
 * the handler (or anything of the probe) loads.
 */
import * as z from 'zod';
import {
  DEFAULT_PROBE_KINDS,
  MODEL_KINDS,
  TASK_KINDS,
  isModelKind,
  type ModelKind,
} from '../../contract/model-kinds.js';
import { parseBudgets } from '../../core/budget.js';
import { UsageError } from '../../core/errors.js';
import { parseHttpUrl } from '../../core/http-url.js';
import { duration, int, parsed, parsedList, parseTolerance, positiveDuration } from '../../cli/flag-types.js';
import { flag } from '../../cli/verb.js';
import { unknownCheck } from '../../probe/check-ids.js';
import { parseSlo } from '../../probe/slo.js';
import { otlpFlag } from '../shared/otlp.js';

function checkIds(field: string): ReturnType<typeof parsedList<string[]>> {
  return parsedList((ids) => {
    const problem = ids.map(unknownCheck).find((p) => p !== undefined);
    if (problem !== undefined) throw new UsageError(`${field}: ${problem}`, { field });
    return ids;
  });
}

function kinds(values: string[]): ModelKind[] {
  const out: ModelKind[] = [];
  for (const k of values) {
    const name = k === 'image-generation' ? 'image' : k;
    if (!isModelKind(name)) {
      throw new UsageError(`--kind: "${k}" is not a kind (one of: ${MODEL_KINDS.join(', ')})`, {
        field: '--kind',
      });
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

function httpUrl(field: string, httpsOnly = false): ReturnType<typeof parsed<string>> {
  return parsed((text) => {
    const url = parseHttpUrl(text, field);
    if (httpsOnly && new URL(url).protocol !== 'https:')
      throw new UsageError(`${field}: must be a public https URL`, { field });
    return url;
  });
}

const fields = {
  model: flag(z.array(z.string()).optional(), {
    flag: '--model <name>',
    help: 'a planned model the model list must contain (repeatable)',
    repeat: 'csv',
  }),
  chatModel: flag(z.string().optional(), {
    flag: '--chat-model <m>',
    help: 'model of the chat, chat-stream and responses checks',
  }),
  messagesModel: flag(z.string().optional(), {
    flag: '--messages-model <m>',
    help: 'model of the messages check',
  }),
  videoModel: flag(z.string().optional(), {
    flag: '--video-model <m>',
    help: 'model of the video checks (default clip-1.1-t2v)',
  }),
  skip: flag(checkIds('--skip').optional(), {
    flag: '--skip <check>',
    help: 'skip a check (repeatable)',
    repeat: 'csv',
  }),
  only: flag(checkIds('--only').optional(), {
    flag: '--only <check>',
    help: 'run only these checks (repeatable)',
    repeat: 'csv',
  }),
  extended: flag(z.boolean().optional(), {
    flag: '--extended',
    help: 'add the contract checks that cost nothing (see below)',
  }),
  junit: flag(z.string().optional(), {
    flag: '--junit <file>',
    help: 'also write a JUnit XML report (missing directories are created)',
  }),
  html: flag(z.string().optional(), {
    flag: '--html <file>',
    help: 'also write a self-contained HTML report (charts; opens offline)',
  }),
  videoTimeout: flag(duration('--video-timeout').default(600_000), {
    flag: '--video-timeout <dur>',
    help: 'limit for the video to end (default 10m)',
    defaultText: '',
  }),
  sim: flag(z.boolean().optional(), {
    flag: '--sim',
    help: 'probe a simulator started in-process (no gateway or token needed)',
  }),
  history: flag(z.boolean().default(true), {
    flag: '--no-history',
    help: 'do not append this run to the probe history',
  }),
  allModels: flag(z.boolean().optional(), {
    flag: '--all-models',
    help: 'probe every listed model with the cheapest request of its kind',
  }),
  kind: flag(parsedList(kinds).optional(), {
    flag: '--kind <kinds>',
    help: 'kinds --all-models probes (comma list; video, alpha, beta need --budget)',
    repeat: 'csv',
  }),
  skipModel: flag(z.array(z.string()).optional(), {
    flag: '--skip-model <glob>',
    help: 'do not probe models matching the glob (repeatable)',
    repeat: 'collect',
  }),
  bothStreamModes: flag(z.boolean().optional(), {
    flag: '--both-stream-modes',
    help: 'probe chat, responses and messages models streaming and not',
  }),
  budget: flag(parsedList(parseBudgets).optional(), {
    flag: '--budget <amount><cur>',
    help: 'cap on the list price of created tasks (with --prices, also of text, embeddings and image rows: their bound until the answer reports its spend), e.g. 20CNY (repeatable)',
    repeat: 'collect',
  }),
  allowUnpriced: flag(z.boolean().optional(), {
    flag: '--allow-unpriced',
    help: 'also create tasks whose list price the documents do not give',
  }),
  probeImage: flag(httpUrl('--probe-image', true).optional(), {
    flag: '--probe-image <url>',
    help: 'public https image for image edits and alpha (--sim: a stand-in)',
  }),
  modelTimeout: flag(duration('--model-timeout').optional(), {
    flag: '--model-timeout <dur>',
    help: 'time limit of one --all-models row (default 60s)',
  }),
  slo: flag(parsed((t) => parseSlo(t, '--slo')).optional(), {
    flag: '--slo <expr>',
    help: "bounds a check must meet, e.g. 'ttft<2s,latency<10s' (missed: failed)",
  }),
  warnSlo: flag(parsed((t) => parseSlo(t, '--warn-slo')).optional(), {
    flag: '--warn-slo <expr>',
    help: 'bounds below which a check is degraded (warn), not failed',
  }),
  prices: flag(z.string().min(1).optional(), {
    flag: '--prices <prices.json>',
    help: 'your prices per model: spend from the usage each answer reports, on every report',
  }),
  baseline: flag(z.string().min(1).optional(), {
    flag: '--baseline <probe.json|last>',
    help: 'compare with an earlier run of this gateway: a gw probe --json file, or last (the history)',
  }),
  failOn: flag(z.enum(['regressions', 'failures']).optional(), {
    flag: '--fail-on <what>',
    help: 'with --baseline: exit 1 on regressions only, or on any failure too (default failures)',
  }),
  tolerance: flag(parsed(parseTolerance).optional(), {
    flag: '--tolerance <pct>',
    help: 'with --baseline: how much slower a cell may get (default 20%)',
  }),
  every: flag(positiveDuration('--every').optional(), {
    flag: '--every <dur>',
    help: 'run again at this interval until Ctrl-C or SIGTERM',
  }),
  metricsPort: flag(int('--metrics-port', { min: 0, max: 65_535 }).optional(), {
    flag: '--metrics-port <port>',
    help: 'with --every: serve Prometheus metrics on /metrics (0: a free port)',
  }),
  // Node listens on every interface for an empty host: 0.0.0.0 must be asked for by name.
  metricsHost: flag(
    z
      .string()
      .refine((h) => h.trim() !== '', {
        error: 'must not be empty (127.0.0.1 by default; 0.0.0.0 for every interface)',
      })
      .optional(),
    {
      flag: '--metrics-host <host>',
      help: 'address of the metrics server (default 127.0.0.1)',
    },
  ),
  metricsFile: flag(z.string().optional(), {
    flag: '--metrics-file <path>',
    help: 'with --every: write the metrics atomically after each run',
  }),
  webhook: flag(httpUrl('--webhook').optional(), {
    flag: '--webhook <url>',
    help: 'with --every: POST alerts and recoveries as JSON',
  }),
  otlp: otlpFlag,
  alertAfter: flag(int('--alert-after', { min: 1, max: 1_000_000 }).optional(), {
    flag: '--alert-after <n>',
    help: 'failed runs in a row before an alert (default 3)',
  }),
};

type Parsed = z.output<z.ZodObject<typeof fields>>;

/** The flags that mean something only next to another one: [key, as typed, the flag it needs]. */
const COMPANIONS: ReadonlyArray<readonly [keyof Parsed, string, string]> = [
  ['kind', '--kind', '--all-models'],
  ['skipModel', '--skip-model', '--all-models'],
  ['bothStreamModes', '--both-stream-modes', '--all-models'],
  ['budget', '--budget', '--all-models'],
  ['allowUnpriced', '--allow-unpriced', '--all-models'],
  ['probeImage', '--probe-image', '--all-models'],
  ['modelTimeout', '--model-timeout', '--all-models'],
  ['metricsPort', '--metrics-port', '--every <dur>'],
  ['metricsHost', '--metrics-host', '--every <dur>'],
  ['metricsFile', '--metrics-file', '--every <dur>'],
  ['webhook', '--webhook', '--every <dur>'],
  ['alertAfter', '--alert-after', '--webhook <url>'],
  ['failOn', '--fail-on', '--baseline <probe.json|last>'],
  ['tolerance', '--tolerance', '--baseline <probe.json|last>'],
];

/** The first rule between flags that the command line breaks, as the UsageError to show. */
export function flagClash(f: Parsed): UsageError | undefined {
  const given = (k: keyof Parsed): boolean => f[k] !== undefined && f[k] !== false;
  const needs: Record<string, boolean> = {
    '--all-models': f.allModels === true,
    '--every <dur>': f.every !== undefined,
    '--webhook <url>': f.webhook !== undefined,
    '--baseline <probe.json|last>': f.baseline !== undefined,
  };
  for (const [key, typed, needed] of COMPANIONS) {
    if (given(key) && needs[needed] !== true)
      return new UsageError(`${typed}: only with ${needed}`, { field: typed });
  }
  if (f.allModels === true) {
    const clash = (['only', 'skip', 'extended'] as const).find((k) => given(k));
    if (clash !== undefined) {
      return new UsageError(
        `--${clash}: not with --all-models (it probes every listed model; use --kind and --skip-model)`,
        { field: `--${clash}` },
      );
    }
    const paid = (f.kind ?? DEFAULT_PROBE_KINDS).filter((k) => TASK_KINDS.includes(k));
    if (paid.length > 0 && (f.budget?.size ?? 0) === 0) {
      return new UsageError(
        `--budget: --kind ${paid.join(', ')} creates paid tasks, so it needs --budget (e.g. --budget 20CNY) to bound their list price`,
        { field: '--budget' },
      );
    }
  }
  if (f.every !== undefined) {
    for (const [key, typed, why] of [
      ['junit', '--junit', 'a watch reports through --metrics-* and --webhook'],
      ['html', '--html', 'gw probe history --html draws the runs of a watch'],
      ['baseline', '--baseline', 'gw probe history shows what changed between the runs of a watch'],
    ] as const) {
      if (given(key)) return new UsageError(`${typed}: not with --every (${why})`, { field: typed });
    }
  }
  return undefined;
}

/** The flags of `gw probe`. */
export const probeFlags = z.object(fields).superRefine((f, ctx) => {
  const e = flagClash(f);
  if (e !== undefined) ctx.addIssue({ code: 'custom', message: e.message, params: { usageError: e } });
});
