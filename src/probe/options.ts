/**
 * The operator flags of `gw probe` (--all-models, --slo, --every and their companions), checked before anything
 * is sent or started: a bad value is a UsageError (exit 2). Loaded only when one of them is given.
 */
import { parseDuration } from '../core/duration.js';
import { UsageError } from '../core/errors.js';
import {
  DEFAULT_PROBE_KINDS,
  MODEL_KINDS,
  TASK_KINDS,
  isModelKind,
  type ModelKind,
} from '../contract/model-kinds.js';
import { parseBudgets } from '../core/budget.js';
import type { Budget } from './budget.js';
import { parseSlo, type SloBounds } from './slo.js';

/** The flags as commander parsed them. */
export interface OperatorFlags {
  allModels?: boolean;
  kind?: string[];
  skipModel?: string[];
  bothStreamModes?: boolean;
  budget?: string[];
  allowUnpriced?: boolean;
  probeImage?: string;
  modelTimeout?: string;
  slo?: string;
  warnSlo?: string;
  every?: string;
  metricsPort?: string;
  metricsHost?: string;
  metricsFile?: string;
  webhook?: string;
  alertAfter?: string;
  sim?: boolean;
}

/** The checked settings. */
export interface OperatorSettings {
  allModels?: {
    kinds: ModelKind[];
    skipGlobs: string[];
    bothStreamModes: boolean;
    budget: Budget;
    allowUnpriced: boolean;
    probeImage: string | undefined;
    rowTimeoutMs: number;
  };
  slo?: SloBounds;
  warnSlo?: SloBounds;
  watch?: {
    intervalMs: number;
    metricsPort?: number;
    metricsHost: string;
    metricsFile?: string;
    webhook?: string;
    alertAfter: number;
  };
}

/** An image the simulator accepts as public (it never fetches it). */
export const SIM_PROBE_IMAGE = 'https://example.com/gw-probe.png';

function int(text: string, field: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < min || n > max) {
    throw new UsageError(`${field}: "${text}" must be an integer ${min}..${max}`, { field });
  }
  return n;
}

function httpUrl(text: string, field: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`${field}: "${text}" is not a URL`, { field });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UsageError(`${field}: "${text}" must be an http(s) URL`, { field });
  }
  return text;
}

/** Checks every operator flag; throws a UsageError naming the first bad one. */
export function parseOperatorFlags(f: OperatorFlags): OperatorSettings {
  const out: OperatorSettings = {};
  const needsAllModels = (
    [
      ['--kind', f.kind !== undefined],
      ['--skip-model', f.skipModel !== undefined],
      ['--both-stream-modes', f.bothStreamModes === true],
      ['--budget', f.budget !== undefined],
      ['--allow-unpriced', f.allowUnpriced === true],
      ['--probe-image', f.probeImage !== undefined],
      ['--model-timeout', f.modelTimeout !== undefined],
    ] as const
  ).find(([, given]) => given);
  if (f.allModels !== true && needsAllModels !== undefined) {
    throw new UsageError(`${needsAllModels[0]}: only with --all-models`, { field: needsAllModels[0] });
  }
  if (f.allModels === true) {
    const kinds: ModelKind[] = [];
    for (const k of f.kind ?? DEFAULT_PROBE_KINDS) {
      const name = k === 'image-generation' ? 'image' : k;
      if (!isModelKind(name)) {
        throw new UsageError(`--kind: "${k}" is not a kind (one of: ${MODEL_KINDS.join(', ')})`, {
          field: '--kind',
        });
      }
      if (!kinds.includes(name)) kinds.push(name);
    }
    const budget = parseBudgets(f.budget ?? []);
    const paid = kinds.filter((k) => TASK_KINDS.includes(k));
    if (paid.length > 0 && budget.size === 0) {
      throw new UsageError(
        `--kind: ${paid.join(', ')} creates paid tasks: give a --budget (e.g. --budget 20CNY) to bound their list price`,
        { field: '--budget' },
      );
    }
    if (f.probeImage !== undefined) {
      const u = httpUrl(f.probeImage, '--probe-image');
      if (!u.startsWith('https:'))
        throw new UsageError('--probe-image: must be a public https URL', { field: '--probe-image' });
    }
    out.allModels = {
      kinds,
      skipGlobs: f.skipModel ?? [],
      bothStreamModes: f.bothStreamModes === true,
      budget,
      allowUnpriced: f.allowUnpriced === true,
      probeImage: f.probeImage ?? (f.sim === true ? SIM_PROBE_IMAGE : undefined),
      rowTimeoutMs: parseDuration(f.modelTimeout ?? '60s', '--model-timeout'),
    };
  }
  if (f.slo !== undefined) out.slo = parseSlo(f.slo, '--slo');
  if (f.warnSlo !== undefined) out.warnSlo = parseSlo(f.warnSlo, '--warn-slo');
  const watchFlags = (
    [
      ['--metrics-port', f.metricsPort],
      ['--metrics-host', f.metricsHost],
      ['--metrics-file', f.metricsFile],
      ['--webhook', f.webhook],
      ['--alert-after', f.alertAfter],
    ] as const
  ).find(([, v]) => v !== undefined);
  if (f.every === undefined && watchFlags !== undefined) {
    throw new UsageError(`${watchFlags[0]}: only with --every <dur>`, { field: watchFlags[0] });
  }
  if (f.every !== undefined) {
    const intervalMs = parseDuration(f.every, '--every');
    if (intervalMs < 1) throw new UsageError('--every: must be longer than 0', { field: '--every' });
    if (f.alertAfter !== undefined && f.webhook === undefined) {
      throw new UsageError('--alert-after: only with --webhook <url>', { field: '--alert-after' });
    }
    out.watch = {
      intervalMs,
      metricsHost: f.metricsHost ?? '127.0.0.1',
      alertAfter: f.alertAfter !== undefined ? int(f.alertAfter, '--alert-after', 1, 1_000_000) : 3,
      ...(f.metricsPort !== undefined
        ? { metricsPort: int(f.metricsPort, '--metrics-port', 0, 65_535) }
        : {}),
      ...(f.metricsFile !== undefined ? { metricsFile: f.metricsFile } : {}),
      ...(f.webhook !== undefined ? { webhook: httpUrl(f.webhook, '--webhook') } : {}),
    };
  }
  return out;
}
