/**
 * `--dry-run` of a create, one shape for every family (gw video create, gw alpha i2v, gw beta task create): with
 * --json one document `{method, path, body, price}` on stdout, where `price` is the estimate gw batch also uses
 * (`priced`, `currency`, `amount` and `basis` when the request fixes them, else `reason`, with the family's
 * details: the clip-1.1 rate, the beta SKU candidates); without --json the request line, the body and one
 * `price:` line on stdout. Notes, and that nothing was sent, go to stderr.
 */
import { type Estimate, estimateRequest } from '../../contract/estimate.js';
import type { Context } from '../../cli/context.js';

/** The one `price:` line of an estimate. */
function priceLine(e: Estimate): string {
  return e.priced
    ? `price: ${e.currency} ${e.amount.toFixed(2)} (${e.basis}, list price)`
    : `price: not known in advance: ${e.reason}`;
}

/**
 * Prints the dry run of `POST <path>` with `body` (`shown`: the body as printed, e.g. with Base64 shortened;
 * `notes`: the family's notes on this estimate).
 */
export async function printDryRun(
  ctx: Context,
  o: {
    path: string;
    body: Record<string, unknown>;
    shown?: unknown;
    notes?: (price: Estimate) => readonly string[];
  },
): Promise<void> {
  const price = estimateRequest(o.path, o.body);
  const body = o.shown ?? o.body;
  await ctx.out.result({ method: 'POST', path: o.path, body, price }, () => {
    ctx.out.line(`POST ${o.path}`);
    ctx.out.line(JSON.stringify(body, null, 2));
    ctx.out.line(priceLine(price));
  });
  for (const n of o.notes?.(price) ?? []) ctx.out.note(n);
  ctx.out.note('dry run: nothing was sent');
}
