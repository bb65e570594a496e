import { describe, expect, it } from 'vitest';
import { walkPages, type Page } from '../../../src/commands/beta/pages.js';

/** A server of `n` items with ids i0…, `size` per page; `ignorePage` answers page 1 whatever was asked. */
function server(n: number, size: number, o: { ignorePage?: boolean; growBy?: number } = {}) {
  const asked: number[] = [];
  let total = n;
  const fetch = async (page: number): Promise<Page<string>> => {
    asked.push(page);
    const p = o.ignorePage === true ? 1 : page;
    const items = Array.from({ length: total }, (_, i) => `i${i}`).slice((p - 1) * size, p * size);
    const answer = { items, total, body: { page } };
    total += o.growBy ?? 0;
    return answer;
  };
  return { fetch, asked };
}

describe('walkPages', () => {
  it('reads only the first page unless asked for all', async () => {
    const s = server(10, 4);
    const w = await walkPages({ first: 1, pageSize: 4, all: false }, s.fetch, (x) => x);
    expect(w.items).toEqual(['i0', 'i1', 'i2', 'i3']);
    expect(w.total).toBe(10);
    expect(s.asked).toEqual([1]);
  });

  it('reads every page from the first asked, ending on the short one', async () => {
    const s = server(10, 4);
    const w = await walkPages({ first: 1, pageSize: undefined, all: true }, s.fetch, (x) => x);
    expect(w.items).toHaveLength(10);
    expect(s.asked).toEqual([1, 2, 3]);
    expect(w.body).toEqual({ page: 3 });
  });

  it('stops on a page of ids already seen (a server ignoring page) instead of looping', async () => {
    const s = server(10, 4, { ignorePage: true });
    const w = await walkPages({ first: 1, pageSize: 4, all: true }, s.fetch, (x) => x);
    expect(w.items).toEqual(['i0', 'i1', 'i2', 'i3']);
    expect(s.asked).toEqual([1, 2]);
  });

  it('stops once the first answer total is counted, even when the total keeps growing', async () => {
    const s = server(8, 4, { growBy: 4 });
    const w = await walkPages({ first: 1, pageSize: 4, all: true }, s.fetch, (x) => x);
    expect(w.items).toHaveLength(8);
    expect(s.asked).toEqual([1, 2]);
  });
});
