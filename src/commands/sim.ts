import { Command, Option } from 'commander';
import { UsageError } from '../core/errors.js';
import type { Runtime } from './context.js';

/** `gw sim`: a local gateway that follows the three documents. */
export default function simCommand(rt: Runtime): Command {
  return new Command('sim')
    .description('run a local gateway simulator that follows the contract (until Ctrl-C / SIGTERM)')
    .addOption(new Option('--port <n>', 'port (0 = a free one)').default('8787'))
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1'))
    .option('--config <file>', 'JSON config: tokens, timings, faults (see src/sim/README.md)')
    .addHelpText(
      'after',
      '\nExamples:\n  gw sim --port 8787\n  GW_BASE_URL=http://127.0.0.1:8787 GW_TOKEN=sk-sim-local-0000 gw models\n  gw sim --config sim.json',
    )
    .action(
      rt.action(async (ctx, opts: { port: string; host: string; config?: string }) => {
        const port = Number(opts.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new UsageError(`port: "${opts.port}" is not a port number (0..65535)`, { field: 'port' });
        }
        const { startSim } = await import('../sim/server.js');
        const { loadSimConfigFile, DEFAULT_SIM_TOKEN } = await import('../sim/config.js');
        const input = opts.config !== undefined ? loadSimConfigFile(opts.config) : {};
        const sim = await startSim({ ...input, host: opts.host, port });
        const tokens = Object.keys(sim.sim.config.tokens);
        if (ctx.globals.json) {
          ctx.out.ndjson({ baseUrl: sim.baseUrl, cdnUrl: sim.cdnUrl, tokens: tokens.length });
        } else {
          ctx.out.line(`gw sim listening on ${sim.baseUrl} (CDN origin ${sim.cdnUrl})`);
          if (tokens.includes(DEFAULT_SIM_TOKEN)) ctx.out.line(`default token: ${DEFAULT_SIM_TOKEN}`);
          ctx.out.line(
            `try: GW_BASE_URL=${sim.baseUrl} GW_TOKEN=${tokens[0] ?? DEFAULT_SIM_TOKEN} gw models`,
          );
          ctx.out.line('ready');
        }
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await sim.close();
        ctx.out.note('gw sim stopped');
        return 0;
      }),
    );
}
