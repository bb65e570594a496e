/**
 * The custom_ids the first pass has seen, for the uniqueness check, kept out of the JS heap: 128 bits of each id's
 * SHA-256 in an open-addressing table of typed arrays (16 bytes an id at most half full: 32 MB for a million
 * lines). A Set of the id strings took about 45 bytes of heap an id, which V8 then multiplied by its heap growing
 * factor for the rest of the run, so a batch's memory grew with the length of its file. Two different ids share
 * 128 bits of SHA-256 with a probability no batch will meet.
 */
import { hash } from 'node:crypto';

const WORDS = 4;

/** 128 bits of the id's SHA-256 as four words (the empty slot is all zeros: one bit set keeps every id off it). */
function words(id: string): number[] {
  const h = hash('sha256', id, 'buffer');
  return [h.readUInt32LE(0), h.readUInt32LE(4), h.readUInt32LE(8), (h.readUInt32LE(12) | 1) >>> 0];
}

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
    if (!put(this.#table, this.#mask, words(id), 0)) return false;
    if (++this.#size * 2 > this.#mask + 1) this.#grow();
    return true;
  }

  /** Whether `id` was added. */
  has(id: string): boolean {
    const table = this.#table;
    return table[slot(table, this.#mask, words(id), 0) + 3] !== 0;
  }

  #grow(): void {
    const old = this.#table;
    const capacity = (this.#mask + 1) * 2;
    this.#table = new Uint32Array(capacity * WORDS);
    this.#mask = capacity - 1;
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at + 3] !== 0) put(this.#table, this.#mask, old, at);
    }
  }
}

/**
 * Where the id whose words are `w[from]`..`w[from + 3]` is in the table, or the empty slot where it goes (open
 * addressing, linear probing).
 */
function slot(table: Uint32Array, mask: number, w: ArrayLike<number>, from: number): number {
  const [a, b, c, d] = [w[from], w[from + 1], w[from + 2], w[from + 3]];
  for (let i = (a as number) & mask; ; i = (i + 1) & mask) {
    const at = i * WORDS;
    if (table[at + 3] === 0) return at;
    if (table[at] === a && table[at + 1] === b && table[at + 2] === c && table[at + 3] === d) return at;
  }
}

/** Puts the id whose words start at `w[from]` in the table; false when it was there. */
function put(table: Uint32Array, mask: number, w: ArrayLike<number>, from: number): boolean {
  const at = slot(table, mask, w, from);
  if (table[at + 3] !== 0) return false;
  for (let k = 0; k < WORDS; k++) table[at + k] = w[from + k] as number;
  return true;
}
