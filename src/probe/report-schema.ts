/**
 * The schema of the probe's JSON document (`gw probe --json`, the `ProbeReport` of runner.ts), for the reports gw
 * reads back: `gw probe --baseline <file>` refuses a file that is not a complete probe report (exit 2 naming the
 * file and the field) rather than compare against numbers it does not hold. Fields a comparison does not read
 * are checked loosely; later fields are allowed.
 */
import * as z from 'zod';
import type { ProbeReport } from './runner.js';

const ms = z.number().nonnegative();
const count = z.number().int().nonnegative();

/** What a run asked for (`asked` of a report and of a history line). */
export const askSchema = z.object({
  mode: z.enum(['checklist', 'all-models']),
  checks: z.array(z.string()),
  models: z.array(z.string()).optional(),
  bothStreamModes: z.boolean().optional(),
  skipModels: z.array(z.string()).optional(),
});

const checkSchema = z.looseObject({
  id: z.string().min(1),
  title: z.string().optional(),
  status: z.enum(['pass', 'fail', 'warn', 'skip']),
  latencyMs: ms,
  ttftMs: ms.optional(),
  requestId: z.string().optional(),
  detail: z.string(),
  error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
  check: z.string().optional(),
  model: z.string().optional(),
  kind: z.string().optional(),
  class: z.string().optional(),
});

/** A probe report as read back. */
export const probeReportSchema = z.looseObject({
  gateway: z.string().min(1),
  startedAt: z.string().refine((t) => Number.isFinite(Date.parse(t)), 'is not a time'),
  finishedAt: z.string(),
  durationMs: ms,
  asked: askSchema.optional(),
  checks: z.array(checkSchema),
  summary: z.object({ passed: count, failed: count, warned: count, skipped: count }),
});

/** A parsed report as the probe's own type (the schema checks every field a reader uses). */
export function asProbeReport(doc: z.output<typeof probeReportSchema>): ProbeReport {
  return doc as unknown as ProbeReport;
}
