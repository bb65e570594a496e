import { once } from 'node:events';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { importTrace, type ImportFormat } from '../../load/import.js';
import type { loadImportFlags } from './import.js';

/** `gw load import`: one trace line per JSON line on stdout, waiting for a slow reader (memory stays bounded). */
export default async function importTraceFile(
  ctx: Context,
  f: Flags<typeof loadImportFlags>,
  format: ImportFormat,
  path: string,
): Promise<void> {
  const stdout = ctx.io.stdout;
  for await (const line of importTrace(format, path, { model: f.model, api: f.api, signal: ctx.signal })) {
    ctx.out.line(JSON.stringify(line));
    if (stdout.writableNeedDrain) await once(stdout, 'drain', { signal: ctx.signal });
  }
}
