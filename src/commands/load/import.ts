import * as z from 'zod';
import { parsed } from '../../cli/flag-types.js';
import { defineVerb, flag } from '../../cli/verb.js';
import { UsageError } from '../../core/errors.js';
import { IMPORT_FORMATS, type ImportFormat } from '../../load/import.js';
import { TRACE_APIS, type TraceApi } from '../../load/trace.js';

export const loadImportFlags = z.object({
  model: flag(z.string().trim().min(1, 'must not be empty').optional(), {
    flag: '-m, --model <model>',
    help: 'the model of every line (mooncake), or of rows that name none (gw-csv)',
  }),
  api: flag(
    parsed((t) => {
      if (!(TRACE_APIS as readonly string[]).includes(t))
        throw new UsageError(`--api: "${t}" is not one of ${TRACE_APIS.join(', ')}`, { field: '--api' });
      return t as TraceApi;
    }).optional(),
    { flag: '--api <api>', help: `mooncake: the api of every line (default chat; ${TRACE_APIS.join(', ')})` },
  ),
});

/** `gw load import`: a trace people have, as gw's trace JSONL on stdout. */
export const loadImportVerb = defineVerb<typeof loadImportFlags, [ImportFormat, string]>({
  name: 'import',
  description: 'turn a recorded trace into gw trace JSONL for gw load --replay (on stdout)',
  args: [
    {
      name: '<format>',
      help: 'gw-csv (the --csv of a gw load run) | mooncake (Mooncake JSONL)',
      choices: IMPORT_FORMATS,
    },
    { name: '<file>', help: 'the trace to import' },
  ],
  flags: loadImportFlags,
  notes: `gw-csv: each row of an earlier gw load --csv becomes a line: its start (scheduled in the open loop, written in
the closed loop) is t_ms, its api, model and session are kept, its output tokens become max_tokens; the prompt is
synthesised (32 words). Rows are written as requests end, so they are put back in start order within a window of
100000 rows; a row that starts earlier than that is refused.
mooncake: {"timestamp", "input_length", "output_length", "hash_ids"} per line (timestamps in ms, lengths in
tokens): t_ms counts from the first timestamp, input_length becomes input_words (gw's synthesised words are one
token each in common tokenizers; at most 100000), output_length max_tokens. The lines name no model: --model is
required, --api chooses the api (default chat).
The file is streamed; a bad row is exit 2 naming its number and field. See docs/replay.md.`,
  examples: [
    'gw load import gw-csv requests.csv > trace.jsonl && gw load --replay trace.jsonl',
    'gw load import mooncake conversation_trace.jsonl -m chat-3.7-plus > trace.jsonl',
  ],
  handler: () => import('./import.run.js'),
});
