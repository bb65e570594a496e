import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { int, parsed, positiveDurationText } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';
import { parseShardFlag } from '../../core/shard.js';
import { otlpFlag } from '../shared/otlp.js';

/** `--wait-lock`: the flag of every verb that writes a batch directory. */
export const waitLockFlag = flag(z.boolean().default(false), {
  flag: '--wait-lock',
  help: 'when another gw works on the same batch directory, wait for it to end (default: exit 1, batch_locked)',
});

// --budget and --timeout stay text: they are parsed in the handler (and printed as given in the resume command).
export const batchRunFlags = z.object({
  out: flag(z.string(), {
    flag: '--out <dir>',
    help: 'the batch directory: state, results.jsonl, errors.jsonl, files/',
  }),
  concurrency: flag(int('--concurrency', { min: 1, max: 4096 }).optional(), {
    flag: '--concurrency <n>',
    help: 'requests in flight at most (default 8; each model adapts below it on 429)',
  }),
  budget: flag(z.array(z.string()).optional(), {
    flag: '--budget <amount><cur>',
    help: 'stop submitting before the spend of submitted lines would pass it (a line counts its estimate until its answer reports its spend), e.g. 50CNY (repeatable)',
    repeat: 'collect',
  }),
  allowUnpriced: flag(z.boolean().default(false), {
    flag: '--allow-unpriced',
    help: 'with --budget: also run lines whose price is not fixed in advance',
  }),
  prices: flag(z.string().min(1).optional(), {
    flag: '--prices <prices.json>',
    help: 'your prices per model: text, embeddings, images and videos get an upper bound (--dry-run, --budget) and a spend from what each answer reports (kept for retry and resume)',
  }),
  maxAttempts: flag(int('--max-attempts', { min: 1, max: 1000 }).optional(), {
    flag: '--max-attempts <n>',
    help: 'sends of one item that created nothing (connection refused; 429s only when none of its model pass); default 8',
  }),
  shard: flag(parsed(parseShardFlag).optional(), {
    flag: '--shard <k/n|auto>',
    help: "only the lines whose custom_id hashes to shard k of n (n machines split one file); auto: the scheduler's index and count (default: GW_SHARD when set)",
  }),
  download: flag(z.boolean().default(true), {
    flag: '--no-download',
    help: 'do not download the results of video tasks',
  }),
  timeout: flag(positiveDurationText('--timeout').optional(), {
    flag: '--timeout <dur>',
    help: 'stop the whole run after this long (exit 4; the same command resumes it)',
  }),
  dryRun: flag(z.boolean().default(false), {
    flag: '--dry-run',
    help: 'check every line; print counts per endpoint and model and the estimated total; send nothing',
  }),
  resendInDoubt: flag(z.boolean().default(false), {
    flag: '--resend-in-doubt',
    help: 'also resend items whose create may have reached the gateway (may bill twice)',
  }),
  waitLock: waitLockFlag,
  otlp: otlpFlag,
});

/** `gw batch run <file.jsonl|-> --out <dir> …`. */
export const batchRunVerb = defineVerb<typeof batchRunFlags, [string]>({
  name: 'run',
  description: 'send every request of a JSONL file (OpenAI Batch input format); resumable',
  args: [{ name: '<file>', help: 'the input, one request per line (- for standard input)' }],
  flags: batchRunFlags,
  // The examples need a few words of set-up of their own, so they stay in the notes.
  notes: `Input: one request per line, {"custom_id": "fox-1", "method": "POST", "url": "/v1/videos", "body": {...}}, where
url is a create endpoint: /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings,
/v1/images/generations, /v1/images/edits, /v1/videos, /alpha/v1/videos/image2video,
/beta/api/v3/contents/generations/tasks. custom_id is required and unique; it also names downloaded files, so on
video and beta lines it must fit the file-name limit with files/<custom_id>.<ext>.part.lock (at most 239 bytes of
UTF-8 for videos, 228 for beta tasks, whose last frame adds ".last_frame"). The file must be UTF-8 (a BOM on line 1
is dropped). Every line is checked before anything is sent (--dry-run too): a bad file exits 2 listing every problem
of every bad line, its number, field and rule (--json: error.details [{line, custom_id, field, rule}]);
--no-validate sends bodies that break the contract as they are. Bodies are sent whole (no streaming).

Output in --out: results.jsonl (OpenAI Batch output format, {"id", "custom_id", "response": {"status_code",
"request_id", "body"}, "error"}, plus "task" — the final record of a video or beta task — and "files" — paths and
byte counts, "files/<custom_id>.<ext>" relative to --out), errors.jsonl (failed and in-doubt items, same format),
state.jsonl (the log gw resumes from; fsynced before each create is sent and after each answer). Alpha tasks end
when created (the gateway offers no query endpoint for them): their line carries the created task. A file gw
reads back that holds a line it did not write is exit 2 naming the file and line; a torn last line (a crash) is
cut, never a complete line before it.

One writer per directory: run, retry, merge --out and download take --out's lock (batch.lock: pid and host). A
second one exits 1 (batch_locked) naming the process, or waits with --wait-lock; the lock of a process that is
gone (or a zombie) is taken over.

Never billed twice: a create whose answer was lost after the request was written is "in doubt" and is not
resent (see gw batch status; gw batch retry --in-doubt resends it). Only a 429 or a connection that never opened
is resent automatically: a 429 pauses that model for every sender until its Retry-After, and refused items go
before new lines. --max-attempts counts the sends of one item that created nothing; a 429 counts only when no
other create of that model was accepted since the item's previous 429 (a gateway that merely rate-limits gets
every item through; one that refuses everything ends them). A gateway nobody reaches ends the run when the first
line runs out of attempts while nothing answered (nothing created). Running the same command again skips what is
done, follows what was created, and sends what was never sent; Ctrl-C prints that command. A create whose answer
was lost but whose task gw journaled (a kill in between) is followed, not left in doubt. A 502, 503, 504 or a
5xx that is not the gateway's JSON error is in doubt too, and stays in the spend. Videos and beta tasks are
polled like gw video wait and downloaded like gw video download (the same path: the task's own .part only,
If-Range, atomic), the soonest to expire first; their polls and downloads also wait out their model's pause, and
their 429s pause it. A finished task whose follow is cut (a download dropped, a full disk, a gateway failing)
stays created: the same command, or gw batch retry, resumes it without creating it again. After --no-download,
gw batch download fetches the files.

Shards: --shard k/n takes the lines whose custom_id hashes to shard k of n, so n machines split one file with no
coordination. --shard auto takes k and n from the scheduler that started gw, the first that is set of: GW_SHARD
(k/n); a Slurm array (SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT); a Kubernetes
Indexed Job (JOB_COMPLETION_INDEX from 0, of GW_SHARDS, which the manifest sets to the Job's completions); GitLab
parallel (CI_NODE_INDEX from 1, of CI_NODE_TOTAL); an AWS Batch array (AWS_BATCH_JOB_ARRAY_INDEX from 0, of
AWS_BATCH_JOB_ARRAY_SIZE). GW_SHARD=k/n shards a run without the flag. An index without its count, or outside it,
is exit 2 naming the variables (nothing sent); gw doctor shows what auto takes. Each directory records its run (a
hash of the input file and n) and its shard: a run of another shard in the same --out is exit 2, nothing sent. A
scheduler's retry of an index resumes its own directory like any re-run; a Slurm index resubmitted alone
(sbatch --array=2, an array of one) resumes the shard its --out holds for that index. gw batch merge joins the
shards (docs/distributed.md: Slurm, Kubernetes, GitHub Actions, GitLab, AWS Batch).

Money: --dry-run prints the estimated list price per currency (clip-1.1 videos: CNY per second; beta tasks are
billed by output tokens and text, embeddings and images by usage: those lines are "unpriced"). --budget refuses to
start when a line is unpriced, unless --allow-unpriced. It counts each submitted line at its estimate until the
answer reports the line's spend (usage, images, a video's seconds), which then replaces the estimate, so the room
a line did not use goes to later lines; a line whose answer reports nothing priced keeps its estimate, and a create
the gateway refused counts nothing. A line that would fit only if lines in flight spend less than their estimates
waits for their answers; the first line that does not fit even then stops submission (the rest are "not
submitted"; the same command with a larger budget sends them).

Prices (--prices <prices.json>): {"currency": "USD", "models": {"<model>": {"input_per_million",
"output_per_million", "cached_per_million", "per_image", "per_video_second", "currency"?}}} (CNY or USD; a model's
own currency overrides the file's; a model the file prices is priced by it, not by the documents' list price). A
line of a priced model is estimated at its upper bound, which its real spend never passes: text and embeddings
count every byte of the body as an input token (at the dearer of the input and cached rates) plus max_tokens
(max_completion_tokens, max_output_tokens) output tokens; images n x per_image; videos seconds x
per_video_second. A text line without an output limit, or with image, audio or file inputs, has no bound: it stays
unpriced (--dry-run --json: unpriced_reason). Each answer's spend comes from the usage, images or seconds it
reports (gw batch status: "implied by usage"); amounts are kept to a millionth. The run records the file: gw batch
retry, and the same command run again without --prices, price the same way; a new --prices replaces it. Exit 0 all succeeded, 1 any failed, in doubt, not
submitted (budget) or unfinished, the gateway unreachable, or the directory locked by another gw, 2 bad input or
a damaged batch file, 3 token refused (or a host name that does not resolve), 4 --timeout, 130 Ctrl-C. --json
prints {dir, total, succeeded, failed, in_doubt, not_submitted, unfinished, skipped, reason, exit_code, resume}.

Examples (against gw sim: GW_BASE_URL=http://127.0.0.1:8787 GW_TOKEN=sk-sim-local-0000):
  printf '%s\\n' \\
    '{"custom_id":"q1","method":"POST","url":"/v1/chat/completions","body":{"model":"chat-3.7-plus","messages":[{"role":"user","content":"hello"}]}}' \\
    '{"custom_id":"fox","method":"POST","url":"/v1/videos","body":{"model":"clip-1.1-t2v","prompt":"a red fox","seconds":3,"resolution":"720p"}}' \\
    > jobs.jsonl
  gw batch run jobs.jsonl --out out --dry-run
  gw batch run jobs.jsonl --out out --budget 5CNY --allow-unpriced
  gw batch run jobs.jsonl --out part1 --shard 1/3 --concurrency 32
  GW_SHARD=2/3 gw batch run jobs.jsonl --out part2
  jq -r .custom_id out/results.jsonl`,
  handler: () => import('./run.run.js'),
});

export function runCommand(rt: Runtime): Command {
  return verbCommand(batchRunVerb, rt);
}
