/**
 * Currencies and budget amounts, apart from the price tables: `--budget` is parsed where flags are parsed (before a
 * handler loads), which must not load the zod schemas of the families whose prices estimate.ts computes.
 */

/** Currencies the documents price in. */
export type Currency = 'CNY' | 'USD';

/** Parses `--budget 50CNY` / `10USD` / `10 usd`. */
export function parseBudget(text: string): { currency: Currency; amount: number } | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(cny|usd)\s*$/i.exec(text);
  if (!m) return undefined;
  return { amount: Number(m[1]), currency: (m[2] as string).toUpperCase() as Currency };
}

/** An amount as shown: in cents, or to a millionth when it has more (a token's spend at --prices). */
export function amountText(a: number): string {
  const r = Math.round(a * 1e6) / 1e6;
  const cents = r.toFixed(2);
  return Number(cents) === r ? cents : r.toFixed(6).replace(/0+$/, '');
}

/** `CNY 3.00 + USD 0.000123`, or `none` when there is no amount. */
export function totalsText(m: Partial<Record<string, number>>, none = '—'): string {
  const parts = Object.entries(m)
    .filter((e): e is [string, number] => typeof e[1] === 'number')
    .map(([c, a]) => `${c} ${amountText(a)}`);
  return parts.length > 0 ? parts.join(' + ') : none;
}
