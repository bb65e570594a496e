import { createHash } from 'node:crypto';
import { UsageError } from '../core/errors.js';

/** `--shard k/n`: 1-based k of n. */
export interface Shard {
  k: number;
  n: number;
}

/** Parses `k/n` (1 ≤ k ≤ n). */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const k = Number(m?.[1]);
  const n = Number(m?.[2]);
  if (!m || !Number.isSafeInteger(n) || n < 1 || k < 1 || k > n) {
    throw new UsageError(`--shard: "${text}" must be k/n with 1 ≤ k ≤ n, e.g. 2/3`, { field: '--shard' });
  }
  return { k, n };
}

/**
 * The shard (1-based) a custom_id belongs to: the first 6 bytes of its SHA-256 modulo n. Stable across machines,
 * Node versions and runs, so n machines split one file with no coordination.
 */
export function shardOf(customId: string, n: number): number {
  const h = createHash('sha256').update(customId, 'utf8').digest();
  return (h.readUIntBE(0, 6) % n) + 1;
}
