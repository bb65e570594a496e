/**
 * `--prices <prices.json>` of gw probe, gw load and gw batch: read before anything is sent, checked with the prices
 * schema (exit 2 naming the file and the field).
 */
import type { PriceTable } from '../../contract/prices.js';

/** The price table of `--prices <path>`. */
export async function readPrices(path: string, signal?: AbortSignal): Promise<PriceTable> {
  const [{ readJsonDocument }, { pricesSchema, PriceTable: Table }] = await Promise.all([
    import('../../core/json-file.js'),
    import('../../contract/prices.js'),
  ]);
  return new Table(await readJsonDocument(path, pricesSchema, '--prices', signal));
}
