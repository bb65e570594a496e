import type { z } from 'zod';

/** A rule violation: the field (e.g. `content[1].role`), the rule, and a documented error code when one applies. */
export interface RuleViolation {
  field: string;
  message: string;
  /** The gateway error code the documents give for this rule (e.g. `invalid_duration`), when stated. */
  code: string | undefined;
}

/** Formats a zod path as `a.b[2].c`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out.length === 0 ? String(p) : `.${String(p)}`;
  }
  return out.length > 0 ? out : 'body';
}

/** The result of a check: the parsed value, or the first violation and every one of them. */
export type CheckResult<T> =
  { ok: true; value: T } | { ok: false; violation: RuleViolation; violations: RuleViolation[] };

function toViolation(issue: z.core.$ZodIssue | undefined): RuleViolation {
  const params = (issue as { params?: { code?: unknown } } | undefined)?.params;
  return {
    field: formatPath(issue?.path ?? []),
    message: issue?.message ?? 'invalid',
    code: typeof params?.code === 'string' ? params.code : undefined,
  };
}

/** Checks `value` against a schema; returns the parsed value, or the first violation (and all of them). */
export function check<T>(schema: z.ZodType<T>, value: unknown): CheckResult<T> {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const violations = r.error.issues.map(toViolation);
  return { ok: false, violation: violations[0] ?? toViolation(undefined), violations };
}
