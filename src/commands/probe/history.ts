import type { Command } from 'commander';
import * as z from 'zod';
import { parseDuration } from '../../core/duration.js';
import type { Runtime } from '../../cli/context.js';
import { parsed } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const probeHistoryFlags = z.object({
  // Days too: 7d is 168h.
  since: flag(
    parsed((t) =>
      parseDuration(
        t.replace(/^(\d+)d$/, (_, d: string) => `${Number(d) * 24}h`),
        '--since',
      ),
    ).optional(),
    { flag: '--since <dur>', help: 'only runs within this long (default 7d)' },
  ),
  check: flag(z.string().optional(), {
    flag: '--check <id>',
    help: 'only this check (e.g. chat, chat-stream, embeddings)',
  }),
  model: flag(z.string().optional(), { flag: '--model <m>', help: 'only this model' }),
  html: flag(z.string().optional(), {
    flag: '--html <file>',
    help: 'also write a self-contained HTML report (uptime bars, changes, latency)',
  }),
  gateway: flag(z.string().optional(), {
    flag: '--gateway <url>',
    help: 'only runs of this gateway (the history keeps every gateway probed)',
  }),
});

/** `gw probe history`: uptime, latency percentiles and changes from the probe history. */
export const probeHistoryVerb = defineVerb<typeof probeHistoryFlags>({
  name: 'history',
  description: 'uptime per check and model, latency percentiles, and what changed since the last run',
  flags: probeHistoryFlags,
  notes: `Reads the probe history (probe-history.jsonl in the state directory, GW_STATE_DIR): every \`gw probe\` run
against a gateway (not --sim, not --no-history) and every run of \`gw probe --every\`.

Every run names its gateway (the base URL without credentials); figures are per gateway, check and model,
never averaged over two gateways. --gateway keeps one gateway's runs (a trailing / or /v1 does not matter).

Table (on a terminal, a gateway column that holds one gateway is named once under it instead): gateway, check, model, runs, uptime over 5m / 1h / 1d / 7d (share of runs that passed or warned; "-"
when none ran in that window), latency p50 / p90 / p99 of the runs that passed, the last status, then what
changed since the previous run of each gateway (its latest earlier run that asked the same: the same checks
and planned models, or the same --all-models kinds, modes and --skip-model globs; else the run just before): a
check that started or stopped failing (only a cell both runs ran), a model that appeared or vanished (only
between runs that asked the same: a run that asked for less makes nothing vanish).

JSON (--json), one document:
  {"generatedAt", "since", "filters": {"check", "model", "gateway"},
   "runs": [{"gateway", "at", "durationMs", "ok", "passed", "failed", "warned"}],
   "series": [{"gateway", "check", "model", "runs", "uptime": {"5m": 1, "1h": 0.98, "1d": null, "7d": …},
               "latencyMs": {"p50", "p90", "p99", "max"} | null, "ttftMs": … | null,
               "last": {"at", "status", "error", "class"}, "failingFor": 0,
               "points": [[<unix ms>, "pass|fail|warn|skip", <latency ms> | null], …]}],
   "changes": [{"kind": "appeared|vanished|started-failing|stopped-failing", "gateway", "check", "model",
                "detail"}],
   "markers": [{"at", "kind", "gateway", "check", "model", "detail"}]}   every change between consecutive
                                                                          runs of a gateway
`,
  examples: [
    `gw probe history`,
    `gw probe history --since 1h --check chat-stream`,
    `gw probe history --model chat-3.7-plus --json | jq '.series[].uptime'`,
  ],
  handler: () => import('./history.run.js'),
});

export default function probeHistoryCommand(rt: Runtime): Command {
  return verbCommand(probeHistoryVerb, rt);
}
