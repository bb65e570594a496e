/**
 * Reports read back by `gw load merge`, `compare` and `--baseline`: read with the size cap and Ctrl-C of every
 * local input, parsed as JSON, then validated with the report's own schema (load/schema.ts). A file that is not a
 * complete report is exit 2 naming the file and the first field that breaks the schema, never a comparison of
 * numbers it does not hold (for `compare`, exit 1 means "regressed").
 */
import { readJsonFile } from '../../core/json-file.js';
import { UsageError } from '../../core/errors.js';
import { checkReport, SCHEMA, type RunReport } from '../../load/schema.js';

/** Reads and validates a report written by `gw load --out`; `field` names the argument or flag it came from. */
export async function readReport(path: string, field: string, signal?: AbortSignal): Promise<RunReport> {
  const doc = await readJsonFile(path, field, signal);
  if ((doc as { schema?: unknown } | null)?.schema !== SCHEMA) {
    throw new UsageError(`${field}: ${path} is not a gw load report (schema ${SCHEMA})`, { field });
  }
  const r = checkReport(doc);
  if (!r.ok) throw new UsageError(`${field}: ${path}: ${r.field}: ${r.rule}`, { field });
  return r.report;
}
