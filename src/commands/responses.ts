import { Command, Option } from 'commander';
import { GatewayError } from '../client/errors.js';
import type { ResponseObject } from '../contract/text.js';
import type { Runtime } from './context.js';
import { CACHE_FIELDS, printAnswer, printStream, printUsage, readPrompt, wantStream } from './text-common.js';

interface ResponsesOptions {
  model?: string;
  stream?: boolean;
  usage?: boolean;
}

/** `gw responses`: one responses call (POST /v1/responses), the prompt sent as an `input_text` part. */
export default function responsesCommand(rt: Runtime): Command {
  return new Command('responses')
    .description('responses call (POST /v1/responses); streams when stdout is a terminal')
    .argument('[prompt...]', 'the prompt (default: standard input)')
    .option('-m, --model <model>', "model name (see `gw models`; default: the profile's defaults.responses)")
    .option('--stream', 'stream the answer (default when stdout is a terminal)')
    .addOption(new Option('--no-stream', 'wait for the complete answer'))
    .option('--usage', 'print token usage (and cache fields) to stderr')
    .addHelpText(
      'after',
      `
Output: the output text; with --json the response object, or one JSON event per line when streaming.
Examples:
  gw responses -m chat-3.7-plus "Write a haiku about gateways"
  echo "hello" | gw responses -m chat-3.7-plus --stream --usage`,
    )
    .action(
      rt.action(async (ctx, words: string[], opts: ResponsesOptions) => {
        const model = ctx.model(opts.model, 'responses');
        const prompt = await readPrompt(ctx, words);
        const body = {
          model,
          input: [{ role: 'user', content: [{ type: 'input_text' as const, text: prompt }] }],
        };
        const responses = await import('../client/resources/responses.js');
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
          if (final.status !== 'failed') printAnswer(ctx, res.data, responses.outputText(res.data));
          else if (ctx.globals.json) ctx.out.json(res.data);
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
          ctx.out.warn(
            `the response is incomplete (${final.incomplete_details?.reason ?? 'no reason given'})`,
          );
        }
        if (opts.usage === true) printUsage(ctx, final?.usage, CACHE_FIELDS.responses);
      }),
    );
}
