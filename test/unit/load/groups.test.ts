import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../../src/load/exchange.js';
import { ApiModelGroups, MAX_GROUPS, mergeGroups } from '../../../src/load/groups.js';

const outcome = (i: number, o: Partial<Outcome> = {}): Outcome => ({
  api: i % 3 === 0 ? 'embeddings' : 'chat',
  stream: false,
  ok: i % 7 !== 0,
  status: 200,
  startMs: i,
  lagMs: (i * 37) % 11,
  e2eMs: 10 + ((i * 13) % 97),
  ...(i % 3 !== 0 ? { ttftMs: 1 + (i % 5) } : {}),
  itlMs: [],
  sent: true,
  ...o,
});
const model = (i: number): string => (i % 2 === 0 ? 'm-a' : 'm-b');

describe('figures per api and model', () => {
  it('merges the shards of a run into exactly the figures of one run of all their requests', () => {
    const one = new ApiModelGroups();
    const parts = [new ApiModelGroups(), new ApiModelGroups(), new ApiModelGroups()];
    for (let i = 0; i < 3000; i++) {
      one.add(outcome(i), model(i));
      parts[i % 3]?.add(outcome(i), model(i));
    }
    const merged = mergeGroups(parts.map((p) => p.report()));
    // Every count and percentile equal (the encodings may differ in their header, not in their counts).
    const figures = (r: ReturnType<ApiModelGroups['report']> | undefined) =>
      Object.fromEntries(Object.entries(r ?? {}).map(([k, v]) => [k, { ...v, histograms: undefined }]));
    expect(figures(merged)).toEqual(figures(one.report()));
    expect(Object.keys(merged ?? {})).toEqual(['chat m-a', 'chat m-b', 'embeddings m-a', 'embeddings m-b']);
    const chat = merged?.['chat m-a'];
    expect(chat?.requests).toBe(chat === undefined ? -1 : chat.ok + chat.errors);
    expect(chat?.latency_ms.lag.count).toBe(chat?.requests);
    expect(mergeGroups([undefined, undefined])).toBeUndefined();
  });

  it('keeps at most MAX_GROUPS pairs apart, the rest under "other"; cancelled requests count nowhere', () => {
    const g = new ApiModelGroups();
    for (let i = 0; i < MAX_GROUPS + 10; i++) g.add(outcome(1), `model-${i}`);
    g.add(outcome(1, { cancelled: true }), 'model-0');
    const r = g.report();
    expect(Object.keys(r)).toHaveLength(MAX_GROUPS + 1);
    expect(r['chat other']?.requests).toBe(10);
    expect(r['chat model-0']?.requests).toBe(1);
  });
});
