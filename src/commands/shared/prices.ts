/**
 * `--prices <prices.json>` of gw probe, gw load and gw batch: read before anything is sent, checked with the prices
 * schema (exit 2 naming the file and the field).
 */
import { PriceTable, pricesSchema } from '../../contract/prices.js';
import { readJsonDocument } from '../../core/json-file.js';

/** The price table of `--prices <path>`. */
export async function readPrices(path: string, signal?: AbortSignal): Promise<PriceTable> {
  return new PriceTable(await readJsonDocument(path, pricesSchema, '--prices', signal));
}
