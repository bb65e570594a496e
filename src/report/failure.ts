/**
 * What a check that did not pass says, each fact once, for every report that shows it (the HTML table, JUnit's
 * `<failure>`): its detail, the gateway's error unless the detail already says it (a failure's detail is usually
 * that very `code: message`), the request id when asked for, the hint.
 */
import type { CheckRecord } from '../probe/runner.js';

/** The lines of a check's explanation, in that order, none repeated. */
export function failureParts(
  c: Pick<CheckRecord, 'detail' | 'error' | 'requestId'>,
  o: { requestId: boolean },
): string[] {
  const parts = [c.detail];
  const e = c.error;
  if (e !== undefined && !c.detail.includes(e.message)) parts.push(`${e.code}: ${e.message}`);
  if (o.requestId && c.requestId !== undefined) parts.push(`request id: ${c.requestId}`);
  if (e?.hint !== undefined) parts.push(`hint: ${e.hint}`);
  return parts.filter((p) => p !== '');
}
