import type { MessageCreateParams, MessageObject } from '../../contract/text.js';
import { UsageError } from '../../core/errors.js';
import type { Context } from '../../cli/context.js';
import { THINKING_MIN, type messagesFlags } from './index.js';
import {
  CACHE_FIELDS,
  printAnswer,
  printStream,
  printUsage,
  readPrompt,
  wantStream,
} from '../shared/text.js';
import type { Flags } from '../../cli/verb.js';
import * as messages from '../../client/resources/messages.js';

function checkThinking(budget: number, maxTokens: number): void {
  if (budget < THINKING_MIN || budget >= maxTokens) {
    throw new UsageError(
      `thinking: ${budget} is out of range; the budget must be at least ${THINKING_MIN} and below --max-tokens (${maxTokens})`,
      { field: 'thinking' },
    );
  }
}

/** Sends one messages call and prints the text blocks (thinking on stderr). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof messagesFlags>,
  words: string[],
): Promise<void> {
  const model = ctx.model(opts.model, 'messages');
  const prompt = await readPrompt(ctx, words);
  const body: MessageCreateParams = {
    model,
    max_tokens: opts.maxTokens,
    messages: [{ role: 'user', content: prompt }],
  };
  if (opts.system !== undefined) body.system = opts.system;
  const budget = opts.thinking;
  if (budget !== undefined && ctx.globals.validate) checkThinking(budget, body.max_tokens);
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
  const call = { signal: ctx.signal, compatVersion: opts.compatVersion, compatBeta: opts.compatBeta };

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
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') out.write(ev.delta.text ?? '');
    });
  } else {
    const res = await messages.create(client, body, call);
    final = res.data;
    for (const b of final.content) if (b.type === 'thinking') ctx.out.note(`thinking: ${b.thinking ?? ''}`);
    await printAnswer(ctx, res.data, messages.text(res.data));
  }
  if (final?.stop_reason === 'max_tokens') {
    ctx.out.warn('the answer was cut at --max-tokens (stop_reason: max_tokens)');
  }
  if (opts.usage === true) printUsage(ctx, final?.usage, CACHE_FIELDS.messages);
}
