/**
 * The syntax of `gw alpha i2v`'s compound flags (`--dynamic-mask`, `--camera`, `--voice`, `--watermark-info`,
 * `--cfg-scale`), used by the verb's flag schema: text that is not the flag's syntax is a UsageError naming the
 * flag. Values are not judged here (that is the contract's job, so `--no-validate` can still send them).
 */
import { UsageError } from '../../core/errors.js';

/** `--dynamic-mask <file>:<x,y;x,y;...>` split into the mask source and its trajectory points. */
export function parseDynamicMaskFlag(spec: string): {
  source: string;
  trajectories: { x: number; y: number }[];
} {
  // The last colon separates the points: a file name (or a Windows drive) may contain colons, points never do.
  const at = spec.lastIndexOf(':');
  const usage = `--dynamic-mask "${spec}": expected <file>:<x,y;x,y;...> (e.g. mask.png:10,20;200,40)`;
  if (at <= 0 || at === spec.length - 1) throw new UsageError(usage, { field: 'dynamic_masks' });
  const source = spec.slice(0, at);
  const trajectories = spec
    .slice(at + 1)
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((p) => {
      const parts = p.split(',').map((n) => n.trim());
      const [x, y] = parts.map(Number);
      if (parts.length !== 2 || parts.some((n) => n === '') || !Number.isFinite(x) || !Number.isFinite(y)) {
        throw new UsageError(`--dynamic-mask "${spec}": point "${p}" is not x,y (numbers)`, {
          field: 'dynamic_masks',
        });
      }
      return { x: x as number, y: y as number };
    });
  return { source, trajectories };
}

/** `--camera <type>[:key=value,...]` (e.g. `simple:zoom=5`) as a `camera_control` object (alpha §2.1). */
export function parseCameraFlag(spec: string): { type: string; config?: Record<string, number> } {
  const at = spec.indexOf(':');
  const type = (at < 0 ? spec : spec.slice(0, at)).trim();
  const usage = `--camera "${spec}": expected <type>[:key=value,...] (e.g. simple:zoom=5)`;
  if (type === '') throw new UsageError(usage, { field: 'camera_control' });
  if (at < 0) return { type };
  const config: Record<string, number> = {};
  for (const pair of spec.slice(at + 1).split(',')) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq).trim();
    const raw = pair.slice(eq + 1).trim();
    const value = Number(raw);
    if (eq <= 0 || key === '' || raw === '' || !Number.isFinite(value)) {
      throw new UsageError(`${usage}; "${pair}" is not key=<number>`, { field: 'camera_control' });
    }
    config[key] = value;
  }
  return { type, config };
}

/** A JSON flag value (`--voice`, `--watermark-info`); bad JSON is a UsageError naming the flag. */
export function parseJsonFlag(flag: string, field: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const example = flag === '--voice' ? `; e.g. --voice '{"voice_id":"v1"}'` : '';
    throw new UsageError(`${flag}: not valid JSON (${(e as Error).message})${example}`, { field });
  }
}

/** `--cfg-scale` as a number (the range is the contract's rule). */
export function parseNumberFlag(flag: string, field: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) {
    throw new UsageError(`${flag}: "${text}" is not a number`, { field });
  }
  return n;
}
