/**
 * The custom_ids the first pass has seen, for the uniqueness check, kept out of the JS heap: 128 bits of each id's
 * SHA-256 in an open-addressing table of typed arrays (16 bytes an id at most half full: 32 MB for a million
 * lines). A Set of the id strings took about 45 bytes of heap an id, which V8 then multiplied by its heap growing
 * factor for the rest of the run, so a batch's memory grew with the length of its file. Two different ids share
 * 128 bits of SHA-256 with a probability no batch will meet.
 */
import { hash } from 'node:crypto';

const WORDS = 4;

export class IdSet {
  #table: Uint32Array;
  #mask: number;
  #size = 0;

  constructor(capacity = 1024) {
    this.#table = new Uint32Array(capacity * WORDS);
    this.#mask = capacity - 1;
  }

  /** The number of ids added. */
  get size(): number {
    return this.#size;
  }

  /** Adds `id`; false when it was there already. */
  add(id: string): boolean {
    const h = hash('sha256', id, 'buffer');
    // The empty slot is all zeros: one bit set keeps every id's words off it.
    const w = [h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8), (h.readUInt32LE(12) | 1) >>> 0];
    if (!this.#insert(this.#table, this.#mask, w)) return false;
    if (++this.#size * 2 > this.#mask + 1) this.#grow();
    return true;
  }

  #insert(table: Uint32Array, mask: number, w: readonly number[]): boolean {
    for (let i = (w[0] as number) & mask; ; i = (i + 1) & mask) {
      const at = i * WORDS;
      if (table[at + 3] === 0) {
        for (let k = 0; k < WORDS; k++) table[at + k] = w[k] as number;
        return true;
      }
      if (table[at] === w[0] && table[at + 1] === w[1] && table[at + 2] === w[2] && table[at + 3] === w[3]) {
        return false;
      }
    }
  }

  #grow(): void {
    const old = this.#table;
    const capacity = (this.#mask + 1) * 2;
    this.#table = new Uint32Array(capacity * WORDS);
    this.#mask = capacity - 1;
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at + 3] !== 0) this.#insert(this.#table, this.#mask, Array.from(old.subarray(at, at + WORDS)));
    }
  }
}
