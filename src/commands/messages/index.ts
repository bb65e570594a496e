import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { int } from '../../cli/flag-types.js';
import { headerValue, modelFlag, streamFlag, usageFlag } from '../shared/text-flags.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

/** The smallest thinking budget the messages protocol accepts (budget_tokens ≥ 1024, below max_tokens). */
export const THINKING_MIN = 1024;

export const messagesFlags = z.object({
  model: modelFlag('messages'),
  maxTokens: flag(int('max_tokens'), {
    flag: '--max-tokens <n>',
    help: 'max_tokens (required by the messages protocol)',
    fills: ['max_tokens'],
  }),
  system: flag(z.string().optional(), { flag: '--system <text>', help: 'system prompt' }),
  stream: streamFlag(),
  thinking: flag(int('thinking').optional(), {
    flag: '--thinking <budget>',
    help: `extended thinking with this token budget, at least ${THINKING_MIN} and below --max-tokens (shown on stderr)`,
  }),
  compatVersion: flag(headerValue('compat_version').optional(), {
    flag: '--compat-version <v>',
    help: 'sent as the x-compat-version header (one line of printable text)',
  }),
  compatBeta: flag(headerValue('compat_beta').optional(), {
    flag: '--compat-beta <v>',
    help: 'sent as the x-compat-beta header (one line of printable text)',
  }),
  usage: usageFlag(),
});

/** `gw messages`: one messages-style call (POST /v1/messages); `--max-tokens` is required. */
export const messagesVerb = defineVerb<typeof messagesFlags, [string[]]>({
  name: 'messages',
  description: 'messages-style call (POST /v1/messages); streams when stdout is a terminal',
  args: [{ name: '[prompt...]', help: 'the prompt (default: standard input)' }],
  flags: messagesFlags,
  notes:
    'Output: the text blocks; with --json the message object, or one JSON event per line when streaming.',
  examples: [
    'gw messages -m chat-3.7-plus --max-tokens 256 "Say hello"',
    'gw messages -m chat-3.7-plus --max-tokens 4096 --thinking 1024 --compat-version 2023-06-01 "Plan a trip"',
  ],
  handler: () => import('./run.js'),
});

export default function messagesCommand(rt: Runtime): Command {
  return verbCommand(messagesVerb, rt);
}
