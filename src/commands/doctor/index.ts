import type { Command } from 'commander';
import * as z from 'zod';
import type { Runtime } from '../../cli/context.js';
import { defineVerb, flag, verbCommand } from '../../cli/verb.js';

export const doctorFlags = z.object({
  offline: flag(z.boolean().optional(), {
    flag: '--offline',
    help: 'do not contact the gateway (settings and paths only)',
  }),
});

/** `gw doctor`: settings and their sources, paths, proxies, and whether the gateway answers. */
export const doctorVerb = defineVerb<typeof doctorFlags>({
  name: 'doctor',
  description: 'check the setup: settings and their sources, paths, proxies, gateway, token, clock',
  flags: doctorFlags,
  notes: `Shows, for each setting, its value and where it came from (flag, env, profile, default), the config file and
state directory, the proxy variables in effect, the default models of the profile, the Node.js version, the shard
--shard auto takes here and where it came from (GW_SHARD, or a Slurm array, Kubernetes Indexed Job, GitLab
parallel or AWS Batch array task's variables; "none" outside them), then asks the gateway for /v1/models: does it
answer, is the token accepted, how far apart are the two clocks (from the answer's Date header; expiry times gw
prints depend on it).

Exit codes: 0 every check passed (warnings allowed) · 1 the gateway cannot be reached or answered an error ·
3 configuration or authentication (no base URL, no token, unknown profile, token rejected, a scheduler's shard
variables that do not add up: an index without its count, or outside it).
With --json: {ok, exit_code, settings, paths, proxy, defaults, shard: {shard, source}, node, checks: [{name,
status, detail}]}.`,
  examples: ['gw doctor', 'gw doctor --offline --json'],
  handler: () => import('./run.js'),
});

export default function doctorCommand(rt: Runtime): Command {
  return verbCommand(doctorVerb, rt);
}
