import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { int, list, num } from '../../cli/flag-types.js';
import { modelFlag, streamFlag, usageFlag } from '../shared/text-flags.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const chatFlags = z.object({
  model: modelFlag('chat'),
  system: flag(z.string().optional(), { flag: '--system <text>', help: 'system message' }),
  image: flag(list(), {
    flag: '--image <https url>',
    help: 'add an image_url part (vision; repeatable; public https)',
    fills: ['messages[].content[].image_url.url'],
    repeat: 'collect',
  }),
  stream: streamFlag(),
  maxTokens: flag(int('max_tokens').optional(), {
    flag: '--max-tokens <n>',
    help: 'max_tokens',
    fills: ['max_tokens'],
  }),
  temperature: flag(num('temperature').optional(), { flag: '--temperature <x>', help: 'temperature' }),
  usage: usageFlag(),
});

/** `gw chat`: one chat completion (POST /v1/chat/completions), streamed when stdout is a terminal. */
export const chatVerb = defineVerb<typeof chatFlags, [string[]]>({
  name: 'chat',
  description: 'chat completion (POST /v1/chat/completions); streams when stdout is a terminal',
  args: [{ name: '[prompt...]', help: 'the prompt (default: standard input)' }],
  flags: chatFlags,
  notes: 'Output: the text; with --json the response body, or one JSON chunk per line when streaming.',
  examples: [
    'gw chat -m chat-3.7-plus "Say hello"',
    'echo "Summarise this" | gw chat -m chat-3.7-plus --no-stream --usage',
    'gw chat -m chat-3-vl-plus --image https://example.com/cat.png "What is in the picture?"',
  ],
  handler: () => import('./run.js'),
});

export default function chatCommand(rt: Runtime): Command {
  return verbCommand(chatVerb, rt);
}
