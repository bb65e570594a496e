/**
 * `--otlp <url>` of gw probe, gw load and gw batch run, and OTEL_EXPORTER_OTLP_ENDPOINT as the OpenTelemetry SDKs
 * read it. The exporter module (and the OpenTelemetry SDK inside it) is imported only when one of them is given.
 */
import { realpathSync } from 'node:fs';
import { dirname, join as pathJoin } from 'node:path';
import { isSea } from 'node:sea';
import type { Context } from '../../cli/context.js';
import { httpUrl } from '../../cli/flag-types.js';
import { flag } from '../../cli/verb.js';
import type { RequestSpan } from '../../client/trace.js';
import { parseHttpUrl } from '../../core/http-url.js';
import type { OtlpEndpoints } from '../../core/otlp.js';

/** The flag, as each verb's schema declares it. */
export const otlpFlag = flag(httpUrl('--otlp').optional(), {
  flag: '--otlp <url>',
  help: 'export a span per gateway request and the GenAI client metrics over OTLP/HTTP to this collector (also OTEL_EXPORTER_OTLP_ENDPOINT)',
});

/**
 * The endpoints of `--otlp <url>` or OTEL_EXPORTER_OTLP_ENDPOINT: a base URL to which `v1/traces` and `v1/metrics`
 * are appended, as the SDKs do; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, when
 * set beside the variable, are used as they are. OTEL_SDK_DISABLED=true turns the variables off (not the flag).
 */
export function otlpEndpoints(
  given: string | undefined,
  env: Record<string, string | undefined>,
): OtlpEndpoints | undefined {
  const fromEnv = (name: string): string | undefined => {
    const v = env[name];
    return v !== undefined && v !== '' ? parseHttpUrl(v, name) : undefined;
  };
  if (given !== undefined) return { traces: join(given, 'v1/traces'), metrics: join(given, 'v1/metrics') };
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined;
  const base = fromEnv('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  return {
    traces: fromEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? join(base, 'v1/traces'),
    metrics: fromEnv('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT') ?? join(base, 'v1/metrics'),
  };
}

/**
 * dist/otlp-worker.js of the launcher's package (bin/gw.js, followed through an npm bin link); none in the single
 * executable, whose launcher is the executable itself: a `../dist/otlp-worker.js` beside it belongs to some
 * other build (and would be run by its embedded Node), so it exports on its main thread instead.
 */
function workerFile(): string | undefined {
  if (isSea()) return undefined;
  const launcher = process.argv[1];
  if (launcher === undefined) return undefined;
  try {
    return pathJoin(dirname(realpathSync(launcher)), '..', 'dist', 'otlp-worker.js');
  } catch {
    return undefined;
  }
}

function join(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}

/**
 * Starts the export when asked for, before the command's first client: every request of the context's clients is
 * recorded, and the last flush runs (bounded) when the command ends. Returns the recorder, for requests the
 * command times itself (gw load), or undefined when no export was asked for.
 */
export async function startOtlp(
  ctx: Context,
  given: string | undefined,
): Promise<((s: RequestSpan) => void) | undefined> {
  const endpoints = otlpEndpoints(given, ctx.io.env);
  if (endpoints === undefined) return undefined;
  const { startOtlpExport } = await import('../../core/otlp-thread.js');
  const otlp = startOtlpExport(
    { endpoints, serviceName: ctx.io.env.OTEL_SERVICE_NAME || undefined, warn: (text) => ctx.out.warn(text) },
    workerFile(),
  );
  const record = (s: RequestSpan): void => otlp.record(s);
  ctx.observeRequests(record);
  ctx.atClose(() => otlp.close());
  return record;
}
