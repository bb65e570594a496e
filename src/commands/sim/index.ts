import type { Command } from 'commander';
import * as z from 'zod';
import { UsageError } from '../../core/errors.js';
import type { Runtime } from '../../cli/context.js';
import { parsed } from '../../cli/flag-types.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const simFlags = z.object({
  port: flag(
    parsed((text) => {
      const port = Number(text);
      if (!/^\d+$/.test(text) || port > 65535) {
        throw new UsageError(`--port: "${text}" is not a port number (0..65535)`, { field: '--port' });
      }
      return port;
    }).optional(),
    { flag: '--port <n>', help: "port (0 = a free one; default: the config's port, else 8787)" },
  ),
  host: flag(z.string().optional(), {
    flag: '--host <host>',
    help: "address to listen on (default: the config's host, else 127.0.0.1)",
  }),
  config: flag(z.string().optional(), {
    flag: '--config <file>',
    help: 'JSON config: host, port, tokens, timings, faults, capacity (see docs/simulator.md)',
  }),
  log: flag(z.boolean().optional(), {
    flag: '--log',
    help: 'print one line per request answered: method, path, status, request id, traceparent (--json: NDJSON)',
  }),
});

/** `gw sim`: a local gateway that follows the contract. */
export const simVerb = defineVerb<typeof simFlags>({
  name: 'sim',
  description: 'run a local gateway simulator that follows the contract (until Ctrl-C / SIGTERM)',
  flags: simFlags,
  examples: [
    'gw sim --port 8787',
    'GW_BASE_URL=http://127.0.0.1:8787 GW_TOKEN=sk-sim-local-0000 gw models',
    'gw sim --config sim.json',
  ],
  handler: () => import('./run.js'),
});

export default function simCommand(rt: Runtime): Command {
  return verbCommand(simVerb, rt);
}
