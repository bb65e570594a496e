import type { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import historyCommand from './history.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';
import { probeFlags } from './flags.js';

export { probeFlags } from './flags.js';

/** `gw probe`: the acceptance checklist. */
export const probeVerb = defineVerb<typeof probeFlags>({
  name: 'probe',
  description: 'run the acceptance checklist against the gateway (or an in-process simulator with --sim)',
  flags: probeFlags,
  notes: `JSON report (--json), one document:
  {"gateway": "<base url>", "startedAt": "<iso>", "finishedAt": "<iso>", "durationMs": 1234,
   "checks": [{"id": "chat", "status": "pass|fail|warn|skip", "latencyMs": 210.5, "ttftMs": 40.1,
               "requestId": "…", "detail": "…", "error": {"code", "message", "status", "requestId", "hint"},
               "data": {…}}],
   "summary": {"passed": 6, "failed": 0, "warned": 0, "skipped": 0}}
  ttftMs only for streams; error only for failures; data holds extras (video: videoId, listPrice, state).

Checks: models, chat, chat-stream, responses, messages, video;
  --extended adds model-not-found, invalid-duration, invalid-resolution (each also checks the
  error body: message ending with "(request id)", error.request_id equal to the header) and embeddings.
Exit: 0 every check that ran passed (warnings allowed) · 1 a check failed · 2 bad flags · 3 no base URL/token, 401

Every model (--all-models): GET /v1/models, then each listed model gets the cheapest request of its kind
  (chat, responses, messages, embeddings, image, image-edit; video, alpha, beta only when named by --kind,
  with a --budget their list price is counted against). A chat model is probed on every text API --kind
  names (chat, responses, messages); a responses or messages model on its own. One row (cell) per model,
  API and mode, one request each: id "<check>:<model>" (check e.g. responses-stream), with "model", "kind"
  and, on failure, "class": auth, quota or rate-limit (not the model's fault; a rate limit only warns),
  timeout, model (the model is broken), unknown-kind (listed as not probed). A stream is read to its end and
  must follow its API's grammar, else the cell fails with error.code: stream_cut (the connection broke),
  stream_no_terminal (no [DONE] / response.completed / message_stop), stream_after_terminal (an event after
  it), stream_no_usage (no usage in the final event: chat's last chunk, the responses terminal event,
  messages' message_delta), stream_no_finish_reason (chat), stream_no_message_delta (messages),
  stream_failed (response.failed), stream_no_text. At most 3 requests in flight; each row is limited by
  --model-timeout (tasks by --video-timeout).
SLOs: --slo 'ttft<2s,latency<10s' fails a passing check that misses a bound; --warn-slo marks it degraded
  (status warn, "slo": {"verdict": "degraded", "missed": [...]}, exit 0; JUnit: passed, with the message).
  The bounds are in the report's "slo" (ms). Latency bounds skip task checks (video, alpha, beta).
Prices (--prices <prices.json>): {"currency": "USD", "models": {"<model>": {"input_per_million",
  "output_per_million", "cached_per_million", "per_image", "per_video_second", "currency"?}}} (CNY or USD; a
  model's own currency overrides the file's). Each row of a priced model gets "spend" from the usage its answer
  reported (cached input tokens at cached_per_million, else at the input rate), the report a total per currency;
  the table a spend column and line, --html a figure. A damaged file is exit 2 naming the field.
  With --all-models and --budget, a text, embeddings or image row of a priced model counts its request's upper
  bound (every body byte an input token, plus its max_tokens; images n x per_image) against the --budget of
  its currency (a currency without one is not capped) until its answer reports its spend, which then replaces
  the bound: a row that would pass it is not probed, nor one it cannot bound unless --allow-unpriced. Rows are
  counted in plan order; a row that would fit only if rows still running spend less than their bound waits for
  them, so which rows are probed never depends on which answer came first. Rows of models the file does not
  price are probed as before.
Baseline (--baseline <probe.json|last>): what changed since an earlier run of the same gateway, cell by cell
  (a cell: check x model x stream mode). A file is a gw probe --json report of this gateway that asked for
  the same (the same checks and planned models, or the same --all-models kinds, modes and --skip-model
  globs): another gateway, other checks or a damaged file is exit 2 before anything is sent. last is this
  gateway's latest run in the probe history that asked the same; without one the run is judged as without
  --baseline, and the report says why. Changes: new-failure, recovered, slower (latency beyond --tolerance,
  default 20%, and by at least 50 ms: one sample per cell), known-failure (failing in both: not worse),
  appeared, vanished (a model no longer listed). A regression is a new failure, a slower cell, a vanished
  model or a failing new one. --fail-on failures (default): exit 1 on any failed check or regression;
  --fail-on regressions: exit 1 only for what got worse. The table gets a "vs baseline" column and a row per
  vanished cell; JSON a "baseline" document: {"source", "startedAt", "tolerancePct", "latencyFloorMs",
  "compared", "reason", "cells": [{"id", "check", "model", "change", "regression", "before", "after",
  "detail"}], "summary": {"regressions", "newFailures", "recovered", "slower", "knownFailures", "appeared",
  "vanished"}}; JUnit fails each regression (vanished cells as their own cases) and skips known failures;
  --html adds a section of the changed cells.
Watch (--every <dur>): a run per interval, never two at once, until Ctrl-C or SIGTERM (exit 0 after the last
  metrics are written and queued webhooks sent). One summary line per run (--json: one report per line).
  The video check is skipped in a watch unless --only names it; --budget applies to each run.
  --metrics-port serves /metrics (Prometheus text, OpenMetrics on request) on 127.0.0.1 (--metrics-host);
  --metrics-file writes the same text atomically (temp file + rename: node_exporter's textfile collector).
  Metrics: probe_success, probe_duration_seconds, gw_probe_check_success{check,model},
  gw_probe_check_degraded, gw_probe_check_duration_seconds, gw_probe_ttft_seconds,
  gw_probe_check_consecutive_failures, gw_probe_last_run_timestamp_seconds, gw_probe_runs_total,
  gw_probe_failed_runs_total. --webhook <url> gets one JSON POST ({"text", "event": "alert"|"recovery",
  "check", "model", "gateway", "consecutiveFailures", "error", "detail", "requestId", "at"}; "text" suits
  Slack) when a check failed --alert-after runs in a row (default 3), and one when it passes again;
  retried with backoff. It never carries the token, a --header (GW_HEADERS, profile headers) or gw's
  traceparent (the gateway's trace stays with the gateway), nor a request or response body.
History: every run (not --sim, not --no-history) is appended to probe-history.jsonl in the state directory
  (GW_STATE_DIR; rotated past 8 MiB); \`gw probe history\` shows uptime, percentiles and changes.
`,
  examples: [
    `gw probe --sim`,
    `gw probe --extended --junit probe.xml`,
    `gw probe --model chat-3.7-plus --model clip-1.1-t2v --video-timeout 15m`,
    `gw probe --skip video --json | jq '.summary'`,
    `gw probe --all-models --both-stream-modes --skip-model 'gamma-*'`,
    `gw probe --all-models --kind video --budget 10CNY`,
    `gw probe --slo 'latency<10s' --warn-slo 'ttft<2s,latency<5s' --skip video`,
    `gw probe --all-models --both-stream-modes --baseline last --fail-on regressions --junit probe.xml`,
    `gw probe --skip video --json > before.json; gw probe --skip video --baseline before.json`,
    `gw probe --every 1m --skip video --metrics-port 9464 --webhook https://hooks.slack.com/services/…`,
  ],
  handler: () => import('./run.js'),
  configure: (cmd) => cmd.enablePositionalOptions(),
});

/** `gw probe` with its `history`. */
export default function probeCommand(rt: Runtime): Command {
  return verbCommand(probeVerb, rt).addCommand(historyCommand(rt));
}
