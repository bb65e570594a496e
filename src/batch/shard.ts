import { createHash } from 'node:crypto';

export { parseShard, type Shard } from '../core/shard.js';

/**
 * The shard (1-based) a custom_id belongs to: the first 6 bytes of its SHA-256 modulo n. Stable across machines,
 * Node versions and runs, so n machines split one file with no coordination.
 */
export function shardOf(customId: string, n: number): number {
  const h = createHash('sha256').update(customId, 'utf8').digest();
  return (h.readUIntBE(0, 6) % n) + 1;
}
