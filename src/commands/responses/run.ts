import { GatewayError } from '../../client/errors.js';
import type { ResponseObject } from '../../contract/text.js';
import type { Context } from '../../cli/context.js';
import type { responsesFlags } from './index.js';
import {
  CACHE_FIELDS,
  printAnswer,
  printStream,
  printUsage,
  readPrompt,
  wantStream,
} from '../shared/text.js';
import type { Flags } from '../../cli/verb.js';
import * as responses from '../../client/resources/responses.js';

/** Sends one responses call and prints the output text (streamed or whole). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof responsesFlags>,
  words: string[],
): Promise<void> {
  const model = ctx.model(opts.model, 'responses');
  const prompt = await readPrompt(ctx, words);
  const body = {
    model,
    input: [{ role: 'user', content: [{ type: 'input_text' as const, text: prompt }] }],
  };
  const client = await ctx.client();
  let final: ResponseObject | undefined;
  let requestId: string | undefined;
  if (wantStream(ctx, opts.stream)) {
    const s = await responses.stream(client, body, { signal: ctx.signal });
    requestId = s.requestId;
    await printStream(ctx, s, (ev, out) => {
      if (ev.type === 'response.output_text.delta') out.write(ev.delta ?? '');
      if (ev.response !== undefined) final = ev.response;
    });
  } else {
    const res = await responses.create(client, body, { signal: ctx.signal });
    requestId = res.requestId;
    final = res.data;
    // A failed response: its body with --json, then the error either way.
    if (final.status !== 'failed') await printAnswer(ctx, res.data, responses.outputText(res.data));
    else await ctx.out.result(res.data, () => {});
  }
  if (final?.status === 'failed') {
    throw new GatewayError({
      status: 200,
      code: final.error?.code ?? 'response_failed',
      message: final.error?.message ?? 'the response failed',
      requestId,
    });
  }
  if (final?.status === 'incomplete') {
    ctx.out.warn(`the response is incomplete (${final.incomplete_details?.reason ?? 'no reason given'})`);
  }
  if (opts.usage === true) printUsage(ctx, final?.usage, CACHE_FIELDS.responses);
}
