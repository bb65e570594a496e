/**
 * Checks a `gw sim --config` document before the simulator starts: a typo in a fault kind or a port that is not
 * a number is named (with the path of the field) instead of being ignored or crashing later.
 */
import type { FaultKind, SimConfigInput } from './config.js';

/** Every fault kind the simulator implements (docs/simulator.md "Faults"). */
export const FAULT_KINDS: readonly FaultKind[] = [
  'latency',
  'status',
  'html502',
  'malformed',
  'drop',
  'burst',
  'slow',
  'no-request-id',
  'redirect-loop',
  'no-terminal',
  'after-terminal',
  'vanish',
];

/** The problems of a config document, as `field: rule` lines (empty when it is usable). */
export function simConfigProblems(doc: unknown, kinds: readonly string[] = FAULT_KINDS): string[] {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return ['the config must be a JSON object'];
  const d = doc as Record<string, unknown>;
  const out: string[] = [];
  if (d.host !== undefined && (typeof d.host !== 'string' || d.host === ''))
    out.push('host: must be a non-empty string');
  for (const key of ['port', 'cdnPort'] as const) {
    const v = d[key];
    if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535)) {
      out.push(`${key}: must be an integer port number (0..65535)`);
    }
  }
  const g = d.generatedModels as Record<string, unknown> | undefined;
  if (g !== undefined) {
    const n = g !== null && typeof g === 'object' ? g.count : undefined;
    if (!(typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 100_000))
      out.push('generatedModels.count: must be an integer in 0..100000');
  }
  if (d.faults !== undefined) {
    if (!Array.isArray(d.faults)) out.push('faults: must be an array');
    else {
      d.faults.forEach((f: unknown, i) => {
        if (f === null || typeof f !== 'object') {
          out.push(`faults[${i}]: must be an object`);
          return;
        }
        const r = f as Record<string, unknown>;
        if (typeof r.route !== 'string')
          out.push(`faults[${i}].route: must be a string ("METHOD /path" or "*")`);
        if (typeof r.kind !== 'string' || !kinds.includes(r.kind)) {
          out.push(
            `faults[${i}].kind: ${JSON.stringify(r.kind)} is not a fault kind (one of: ${kinds.join(', ')})`,
          );
        }
      });
    }
  }
  return out;
}

/** The document as config input, after simConfigProblems found nothing. */
export function asSimConfigInput(doc: unknown): SimConfigInput {
  return doc as SimConfigInput;
}
