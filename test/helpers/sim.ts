import { afterEach } from 'vitest';
import { DEFAULT_SIM_TOKEN } from '../../src/sim/config.js';
import { startSim, type SimHandle, type StartSimOptions } from '../../src/sim/server.js';

/** Fast timings so state machines finish in milliseconds in tests. */
export const FAST = {
  videoQueuedMs: 20,
  videoRunningMs: 40,
  betaQueuedMs: 20,
  betaRunningMs: 40,
  assetProcessingMs: 30,
  streamDelayMs: 0,
};

/**
 * Tasks and assets that are done as soon as they are created (a wait ends on its first look, without a poll
 * sleep): for tests of workflows, not of the states in between.
 */
export const INSTANT = {
  videoQueuedMs: 0,
  videoRunningMs: 0,
  betaQueuedMs: 0,
  betaRunningMs: 0,
  assetProcessingMs: 0,
  streamDelayMs: 0,
};

const open: SimHandle[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** Starts a simulator for this test (closed automatically after it) and the env to point gw at it. */
export async function useSim(
  o: StartSimOptions = {},
): Promise<SimHandle & { env: { GW_BASE_URL: string; GW_TOKEN: string } }> {
  const sim = await startSim({ port: 0, ...o, timings: { ...FAST, ...o.timings } });
  open.push(sim);
  return Object.assign(sim, { env: { GW_BASE_URL: sim.baseUrl, GW_TOKEN: DEFAULT_SIM_TOKEN } });
}

/** Requests the simulator received, excluding nothing: "nothing was sent" means this is empty. */
export function apiRequests(sim: SimHandle): SimHandle['requests'] {
  return sim.requests;
}
