/**
 * The simulator of `gw probe --sim`, started in-process on loopback. It serves only the route families the
 * checklist calls, and loads them in two steps: the model list and videos before any check starts, the text
 * family (chat, responses, messages, embeddings: the largest contract schemas) on first need, which the runner
 * asks for after the slowest check (the video) is under way. The code the probe never calls (images, alpha,
 * beta tasks and assets) is never loaded.
 */
import type { CheckFamily } from './checks.js';

/** A running probe simulator. */
export interface ProbeSim {
  baseUrl: string;
  /** The simulator's default token (every model visible). */
  token: string;
  /** Resolves once the routes of `family` answer. */
  ready(family: CheckFamily): Promise<void>;
  /** Forgets the requests logged so far (a watch runs for days against it). */
  clearLog?(): void;
  close(): Promise<void>;
}

/** The probe simulator's code, loaded; `start()` listens. */
export interface ProbeSimCode {
  start(): Promise<ProbeSim>;
}

/** Loads the probe simulator's code (the server and the families every run needs); nothing listens yet. */
export async function loadProbeSim(): Promise<ProbeSimCode> {
  const [{ startSim }, { DEFAULT_SIM_TOKEN }, models, videos] = await Promise.all([
    import('../sim/server.js'),
    import('../sim/config.js'),
    import('../sim/routes/models.js'),
    import('../sim/routes/videos.js'),
  ]);
  return {
    async start() {
      const handle = await startSim({
        port: 0,
        host: '127.0.0.1',
        // Demo-fast video timings: the run stays snappy but still shows queued → in_progress → completed.
        timings: { videoQueuedMs: 200, videoRunningMs: 600 },
        routes: (sim) => {
          models.registerModelRoutes(sim);
          videos.registerVideoRoutes(sim);
        },
      });
      let text: Promise<void> | undefined;
      return {
        baseUrl: handle.baseUrl,
        token: DEFAULT_SIM_TOKEN,
        ready(family) {
          if (family !== 'text') return Promise.resolve();
          text ??= import('../sim/routes/text.js').then((m) => m.registerTextRoutes(handle.sim));
          return text;
        },
        clearLog: () => {
          handle.requests.length = 0;
        },
        close: () => handle.close(),
      };
    },
  };
}

/** Starts the probe's simulator with demo-fast video timings. */
export async function startProbeSim(): Promise<ProbeSim> {
  return (await loadProbeSim()).start();
}

/**
 * Extra models the `--all-models --sim` simulator lists besides the documents' names, so every kind has a row:
 * a responses-only model, a messages-only model and a reasoning chat model.
 */
export const PROBE_SIM_EXTRA_MODELS = {
  'codex-mini-sim': 'responses',
  'claude-sim-4': 'messages',
  'qwq-sim-reasoner': 'chat',
} as const;

/** A simulator with every route family and the extra models of every kind (`gw probe --all-models --sim`). */
export async function startFullProbeSim(): Promise<ProbeSim> {
  const [{ startSim }, { DEFAULT_SIM_TOKEN }] = await Promise.all([
    import('../sim/server.js'),
    import('../sim/config.js'),
  ]);
  const handle = await startSim({
    port: 0,
    host: '127.0.0.1',
    timings: { videoQueuedMs: 200, videoRunningMs: 600, betaQueuedMs: 200, betaRunningMs: 600 },
    extraModels: { ...PROBE_SIM_EXTRA_MODELS },
  });
  return {
    baseUrl: handle.baseUrl,
    token: DEFAULT_SIM_TOKEN,
    ready: () => Promise.resolve(),
    clearLog: () => {
      handle.requests.length = 0;
    },
    close: () => handle.close(),
  };
}
