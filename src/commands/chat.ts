import { Command, Option } from 'commander';
import type { ChatCreateParams } from '../contract/text.js';
import type { Runtime } from './context.js';
import {
  CACHE_FIELDS,
  collect,
  intFlag,
  numberFlag,
  printAnswer,
  printStream,
  printUsage,
  readPrompt,
  wantStream,
} from './text-common.js';

interface ChatOptions {
  model?: string;
  system?: string;
  image: string[];
  stream?: boolean;
  maxTokens?: string;
  temperature?: string;
  usage?: boolean;
}

/** `gw chat`: one chat completion (POST /v1/chat/completions), streamed when stdout is a terminal. */
export default function chatCommand(rt: Runtime): Command {
  return new Command('chat')
    .description('chat completion (POST /v1/chat/completions); streams when stdout is a terminal')
    .argument('[prompt...]', 'the prompt (default: standard input)')
    .option('-m, --model <model>', "model name (see `gw models`; default: the profile's defaults.chat)")
    .option('--system <text>', 'system message')
    .option('--image <https url>', 'add an image_url part (vision; repeatable; public https)', collect, [])
    .option('--stream', 'stream the answer (default when stdout is a terminal)')
    .addOption(new Option('--no-stream', 'wait for the complete answer'))
    .option('--max-tokens <n>', 'max_tokens')
    .option('--temperature <x>', 'temperature')
    .option('--usage', 'print token usage (and cache fields) to stderr')
    .addHelpText(
      'after',
      `
Output: the text; with --json the response body, or one JSON chunk per line when streaming.
Examples:
  gw chat -m chat-3.7-plus "Say hello"
  echo "Summarise this" | gw chat -m chat-3.7-plus --no-stream --usage
  gw chat -m chat-3-vl-plus --image https://example.com/cat.png "What is in the picture?"`,
    )
    .action(
      rt.action(async (ctx, words: string[], opts: ChatOptions) => {
        const model = ctx.model(opts.model, 'chat');
        const prompt = await readPrompt(ctx, words);
        const content =
          opts.image.length === 0
            ? prompt
            : [
                { type: 'text' as const, text: prompt },
                ...opts.image.map((url) => ({ type: 'image_url' as const, image_url: { url } })),
              ];
        const body: ChatCreateParams = {
          model,
          messages: [
            ...(opts.system !== undefined ? [{ role: 'system', content: opts.system }] : []),
            { role: 'user', content },
          ],
        };
        const maxTokens = intFlag(opts.maxTokens, 'max_tokens');
        if (maxTokens !== undefined) body.max_tokens = maxTokens;
        const temperature = numberFlag(opts.temperature, 'temperature');
        if (temperature !== undefined) body.temperature = temperature;

        const chat = await import('../client/resources/chat.js');
        const client = await ctx.client();
        let usage: unknown;
        let finish: string | null | undefined;
        if (wantStream(ctx, opts.stream)) {
          const s = await chat.stream(client, body, { signal: ctx.signal });
          await printStream(ctx, s, (c, out) => {
            const choice = c.choices[0];
            out.write(choice?.delta?.content ?? '');
            finish = choice?.finish_reason ?? finish;
            if (c.usage) usage = c.usage;
          });
        } else {
          const res = await chat.create(client, body, { signal: ctx.signal });
          printAnswer(ctx, res.data, chat.messageText(res.data));
          usage = res.data.usage;
          finish = res.data.choices[0]?.finish_reason;
        }
        if (finish === 'length')
          ctx.out.warn('the answer was cut at the token limit (finish_reason: length)');
        if (opts.usage === true) printUsage(ctx, usage, CACHE_FIELDS.chat);
      }),
    );
}
