/**
 * The first pass over a batch file: every line parsed and checked against the contract before anything is sent,
 * custom_id uniqueness, the shard filter, and the counts and estimates `--dry-run` and `--budget` need. Streams:
 * only the set of custom_ids is held (and dropped after the pass).
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Currency } from '../contract/estimate.js';
import type { PriceTable } from '../contract/prices.js';
import { IdSet } from './ids.js';
import { inputLines, isProblem, parseLine, type LineProblem } from './input.js';
import { shardOf, type Shard } from './shard.js';
import { byCurrency, moneyDigits, roundMoney, type BatchState } from './state.js';

/** Counts of one endpoint and model. */
export interface GroupCount {
  url: string;
  model: string;
  count: number;
  /** Lines not finished yet (what a run would send or follow). */
  pending: number;
  priced: Partial<Record<Currency, number>>;
  unpriced: number;
}

/** What the first pass found. */
export interface Scan {
  /** Non-blank lines of the file. */
  lines: number;
  /** Lines in this shard. */
  inShard: number;
  problems: LineProblem[];
  /** Problems beyond the ones kept in `problems`. */
  moreProblems: number;
  /** Lines with at least one problem. */
  badLines: number;
  groups: Map<string, GroupCount>;
  totals: Partial<Record<Currency, number>>;
  unpriced: number;
  /** Why the first unpriced line has no price. */
  unpricedReason?: string | undefined;
  /** Currencies of priced lines. */
  currencies: Set<Currency>;
  /** SHA-256 (hex) of the input's bytes, read in the same pass: the run's identity comes from it. */
  digest: string;
}

/** Problems kept for the error (one document, bounded memory however many lines are bad). */
export const KEEP_PROBLEMS = 1000;

/**
 * Runs the first pass. `validate: false` checks only the envelope (custom_id, url, body), not the contract; `prices`
 * (--prices) bounds the lines of the models it prices.
 */
export async function scan(
  input: string | Readable,
  o: {
    validate: boolean;
    shard?: Shard | undefined;
    state?: BatchState | undefined;
    prices?: PriceTable | undefined;
  },
): Promise<Scan> {
  const digits = moneyDigits(o.prices);
  const s: Scan = {
    lines: 0,
    inShard: 0,
    problems: [],
    moreProblems: 0,
    badLines: 0,
    groups: new Map(),
    totals: {},
    unpriced: 0,
    currencies: new Set(),
    digest: '',
  };
  const hash = createHash('sha256');
  const seen = new IdSet();
  let lastBad = 0;
  const problem = (p: LineProblem): void => {
    if (p.lineNo !== lastBad) s.badLines++;
    lastBad = p.lineNo;
    if (s.problems.length < KEEP_PROBLEMS) s.problems.push(p);
    else s.moreProblems++;
  };
  for await (const l of inputLines(input, (b) => hash.update(b))) {
    s.lines++;
    const lineNo = l.lineNo;
    const line = 'text' in l ? parseLine(lineNo, l.text, o.prices) : l.problems;
    if (isProblem(line)) {
      for (const p of line) problem(p);
      continue;
    }
    if (!seen.add(line.customId)) {
      problem({
        lineNo,
        customId: line.customId,
        field: 'custom_id',
        message: `"${line.customId}" is not unique`,
      });
      continue;
    }
    if (o.shard !== undefined && shardOf(line.customId, o.shard.n) !== o.shard.k) continue;
    s.inShard++;
    const status = o.state?.status.get(line.customId);
    const finished = status === 'done' || status === 'failed';
    // A finished line was checked when it was sent; a re-run does not pay for checking it again.
    if (o.validate && !finished) {
      const violations = await line.endpoint.check(line.body);
      for (const v of violations) {
        problem({
          lineNo,
          customId: line.customId,
          field: `body.${v.field}`.replace(/^body\.body$/, 'body'),
          message: v.message,
        });
      }
      if (violations.length > 0) continue;
    }
    const key = `${line.url}\t${line.model}`;
    let g = s.groups.get(key);
    if (g === undefined) {
      g = { url: line.url, model: line.model, count: 0, pending: 0, priced: {}, unpriced: 0 };
      s.groups.set(key, g);
    }
    g.count++;
    if (!finished) g.pending++;
    const est = line.est;
    if (est !== undefined) {
      g.priced[est.c] = roundMoney((g.priced[est.c] ?? 0) + est.a, digits);
      s.totals[est.c] = roundMoney((s.totals[est.c] ?? 0) + est.a, digits);
      s.currencies.add(est.c);
    } else {
      g.unpriced++;
      s.unpriced++;
      s.unpricedReason ??= line.unpriced;
    }
  }
  s.digest = hash.digest('hex');
  const ordered = (t: Partial<Record<Currency, number>>) =>
    byCurrency(
      Object.entries(t).map(([c, a]) => ({ c: c as Currency, a: a ?? 0 })),
      digits,
    );
  s.totals = ordered(s.totals);
  for (const g of s.groups.values()) g.priced = ordered(g.priced);
  return s;
}
