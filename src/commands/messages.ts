import { Command, Option } from 'commander';
import type { MessageCreateParams, MessageObject } from '../contract/text.js';
import { UsageError } from '../core/errors.js';
import { hasControlChars } from '../ui/sanitize.js';
import type { Runtime } from './context.js';
import {
  CACHE_FIELDS,
  intFlag,
  printAnswer,
  printStream,
  printUsage,
  readPrompt,
  wantStream,
} from './text-common.js';

interface MessagesOptions {
  model?: string;
  maxTokens: string;
  system?: string;
  stream?: boolean;
  thinking?: string;
  compatVersion?: string;
  compatBeta?: string;
  usage?: boolean;
}

/** The smallest thinking budget the messages protocol accepts (budget_tokens ≥ 1024, below max_tokens). */
export const THINKING_MIN = 1024;

function checkThinking(budget: number, maxTokens: number): void {
  if (budget < THINKING_MIN || budget >= maxTokens) {
    throw new UsageError(
      `thinking: ${budget} is out of range; the budget must be at least ${THINKING_MIN} and below --max-tokens (${maxTokens})`,
      { field: 'thinking' },
    );
  }
}

/** A value sent as an HTTP header: one line without control characters (a CR/LF would split the header). */
function headerFlag(value: string | undefined, field: string): void {
  if (value !== undefined && hasControlChars(value)) {
    throw new UsageError(
      `${field}: the value contains a line break or control character; give one line of text`,
      {
        field,
      },
    );
  }
}

/** `gw messages`: one messages-style call (POST /v1/messages); `--max-tokens` is required. */
export default function messagesCommand(rt: Runtime): Command {
  return new Command('messages')
    .description('messages-style call (POST /v1/messages); streams when stdout is a terminal')
    .argument('[prompt...]', 'the prompt (default: standard input)')
    .option('-m, --model <model>', "model name (see `gw models`; default: the profile's defaults.messages)")
    .requiredOption('--max-tokens <n>', 'max_tokens (required by the messages protocol)')
    .option('--system <text>', 'system prompt')
    .option('--stream', 'stream the answer (default when stdout is a terminal)')
    .addOption(new Option('--no-stream', 'wait for the complete answer'))
    .option(
      '--thinking <budget>',
      `extended thinking with this token budget, at least ${THINKING_MIN} and below --max-tokens (shown on stderr)`,
    )
    .option('--compat-version <v>', 'sent as the x-compat-version header (one line of printable text)')
    .option('--compat-beta <v>', 'sent as the x-compat-beta header (one line of printable text)')
    .option('--usage', 'print token usage (and cache fields) to stderr')
    .addHelpText(
      'after',
      `
Output: the text blocks; with --json the message object, or one JSON event per line when streaming.
Examples:
  gw messages -m chat-3.7-plus --max-tokens 256 "Say hello"
  gw messages -m chat-3.7-plus --max-tokens 4096 --thinking 1024 --compat-version 2023-06-01 "Plan a trip"`,
    )
    .action(
      rt.action(async (ctx, words: string[], opts: MessagesOptions) => {
        const model = ctx.model(opts.model, 'messages');
        const prompt = await readPrompt(ctx, words);
        const body: MessageCreateParams = {
          model,
          max_tokens: intFlag(opts.maxTokens, 'max_tokens') as number,
          messages: [{ role: 'user', content: prompt }],
        };
        if (opts.system !== undefined) body.system = opts.system;
        const budget = intFlag(opts.thinking, 'thinking');
        if (budget !== undefined && ctx.globals.validate) checkThinking(budget, body.max_tokens);
        headerFlag(opts.compatVersion, 'compat_version');
        headerFlag(opts.compatBeta, 'compat_beta');
        if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
        const call = { signal: ctx.signal, compatVersion: opts.compatVersion, compatBeta: opts.compatBeta };

        const messages = await import('../client/resources/messages.js');
        const client = await ctx.client();
        let final: MessageObject | undefined;
        if (wantStream(ctx, opts.stream)) {
          const s = await messages.stream(client, body, call);
          await printStream(ctx, s, (ev, out) => {
            const m = messages.accumulate(final, ev);
            final = m;
            if (ev.type === 'content_block_stop' && m.content[ev.index]?.type === 'thinking') {
              ctx.out.note(`thinking: ${m.content[ev.index]?.thinking ?? ''}`);
            }
            if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta')
              out.write(ev.delta.text ?? '');
          });
        } else {
          const res = await messages.create(client, body, call);
          final = res.data;
          for (const b of final.content)
            if (b.type === 'thinking') ctx.out.note(`thinking: ${b.thinking ?? ''}`);
          printAnswer(ctx, res.data, messages.text(res.data));
        }
        if (final?.stop_reason === 'max_tokens') {
          ctx.out.warn('the answer was cut at --max-tokens (stop_reason: max_tokens)');
        }
        if (opts.usage === true) printUsage(ctx, final?.usage, CACHE_FIELDS.messages);
      }),
    );
}
