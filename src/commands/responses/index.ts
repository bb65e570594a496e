import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { modelFlag, streamFlag, usageFlag } from '../shared/text-flags.js';
import { defineVerb, verbCommand } from '../../cli/verb.js';

export const responsesFlags = z.object({
  model: modelFlag('responses'),
  stream: streamFlag(),
  usage: usageFlag(),
});

/** `gw responses`: one responses call (POST /v1/responses), the prompt sent as an `input_text` part. */
export const responsesVerb = defineVerb<typeof responsesFlags, [string[]]>({
  name: 'responses',
  description: 'responses call (POST /v1/responses); streams when stdout is a terminal',
  args: [{ name: '[prompt...]', help: 'the prompt (default: standard input)' }],
  flags: responsesFlags,
  notes:
    'Output: the output text; with --json the response object, or one JSON event per line when streaming.',
  examples: [
    'gw responses -m chat-3.7-plus "Write a haiku about gateways"',
    'echo "hello" | gw responses -m chat-3.7-plus --stream --usage',
  ],
  handler: () => import('./run.js'),
});

export default function responsesCommand(rt: Runtime): Command {
  return verbCommand(responsesVerb, rt);
}
