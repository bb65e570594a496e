import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const API_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

export const apiFlags = z.object({
  method: flag(
    z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(API_METHODS, { error: `must be one of ${API_METHODS.join(', ')}` }))
      .optional(),
    {
      flag: '-X, --method <method>',
      help: 'HTTP method (default GET, or POST when fields or --input are given)',
      offer: API_METHODS,
    },
  ),
  rawField: flag(z.array(z.string()).optional(), {
    flag: '-f, --raw-field <key=value>',
    help: 'a string field, repeatable (key[sub]=v nests, key[]=v appends)',
    repeat: 'collect',
  }),
  field: flag(z.array(z.string()).optional(), {
    flag: '-F, --field <key=value>',
    help: 'a typed field, repeatable: true, false, null and numbers as JSON values, @file the text of a file (@- standard input)',
    repeat: 'collect',
  }),
  input: flag(z.string().optional(), {
    flag: '--input <file>',
    help: 'the request body, sent as it is (- for standard input); fields then go into the query',
  }),
  paginate: flag(z.boolean().optional(), {
    flag: '--paginate',
    help: 'walk every page of a paged list route (beta task list, ListAssets), printing each answer',
  }),
});

/** `gw api <path>`: a raw call of any route of the gateway, as `gh api` does it. */
export const apiVerb = defineVerb<typeof apiFlags, [string]>({
  name: 'api',
  description: 'call any route of the gateway and print the answer unchanged (as gh api)',
  args: [{ name: '<path>', help: 'a path on the gateway, from /, with its query (e.g. /v1/models)' }],
  flags: apiFlags,
  notes: [
    'Fields: with GET or HEAD (and with --input) they are query parameters, otherwise one JSON object body',
    '(Content-Type: application/json; -H "Content-Type: …" sends another). -f fields are placed before -F ones.',
    'The answer is printed as it arrives (an event stream too), byte for byte to a pipe or file (binary too; a',
    'token in it masked); on a terminal it is shown as UTF-8 text, control characters as \\xNN and bytes that',
    'are not UTF-8 as U+FFFD (redirect to a file for the bytes). --input is sent byte for byte too.',
    'An error status prints the error on stderr and exits like every command',
    '(1 gateway error, 3 authentication, 4 timeout); only GET, HEAD and DELETE are retried.',
    "--paginate prints each page's answer followed by a newline (a stream of JSON documents for jq).",
    "The token and --header go to the gateway's origin only; a full URL is refused.",
  ].join('\n'),
  examples: [
    'gw api /v1/models',
    'gw api /v1/embeddings -f model=text-embedding-v4 -f "input[]=first" -f "input[]=second" -F dimensions=64',
    'echo \'{"model":"chat-3.7-plus","messages":[{"role":"user","content":"hi"}],"stream":true}\' | gw api /v1/chat/completions --input -',
    'gw api --paginate "/beta/api/v3/contents/generations/tasks?page_size=50"',
  ],
  handler: () => import('./run.js'),
});

export default function apiCommand(rt: Runtime): Command {
  return verbCommand(apiVerb, rt);
}
