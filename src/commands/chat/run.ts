import type { ChatCreateParams } from '../../contract/text.js';
import type { chatFlags } from './index.js';
import type { Context } from '../../cli/context.js';
import {
  CACHE_FIELDS,
  printAnswer,
  printStream,
  printUsage,
  readPrompt,
  wantStream,
} from '../shared/text.js';
import type { Flags } from '../../cli/verb.js';
import * as chat from '../../client/resources/chat.js';

/** Sends one chat completion and prints the answer (streamed or whole). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof chatFlags>,
  words: string[],
): Promise<void> {
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
  if (opts.maxTokens !== undefined) body.max_tokens = opts.maxTokens;
  if (opts.temperature !== undefined) body.temperature = opts.temperature;

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
    await printAnswer(ctx, res.data, chat.messageText(res.data));
    usage = res.data.usage;
    finish = res.data.choices[0]?.finish_reason;
  }
  if (finish === 'length') ctx.out.warn('the answer was cut at the token limit (finish_reason: length)');
  if (opts.usage === true) printUsage(ctx, usage, CACHE_FIELDS.chat);
}
