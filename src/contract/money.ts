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
