import { Command } from 'commander';
import type { Runtime } from '../../cli/context.js';
import { downloadCommand } from './download.js';
import { mergeCommand } from './merge.js';
import { retryCommand } from './retry.js';
import { runCommand } from './run.js';
import { statusCommand } from './status.js';

/** `gw batch run | status | retry | merge | download`: many requests from one JSONL file, resumable, never billed twice. */
export default function batchCommand(rt: Runtime): Command {
  return new Command('batch')
    .description('many requests from a JSONL file: run | status | retry | merge | download')
    .addCommand(runCommand(rt))
    .addCommand(statusCommand(rt))
    .addCommand(retryCommand(rt))
    .addCommand(mergeCommand(rt))
    .addCommand(downloadCommand(rt))
    .addHelpText(
      'after',
      `
Examples (against a local simulator: gw sim --port 8787 in another terminal):
  export GW_BASE_URL=http://127.0.0.1:8787 GW_TOKEN=sk-sim-local-0000
  printf '%s\\n' '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"chat-3.7-plus","messages":[{"role":"user","content":"hi"}]}}' > jobs.jsonl
  gw batch run jobs.jsonl --out out/
  gw batch status out/
  gw batch retry out/ --failed`,
    );
}
