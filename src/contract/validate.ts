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

/** Checks `value` against a schema; returns the first violation or the parsed value. */
export function check<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { ok: true; value: T } | { ok: false; violation: RuleViolation } {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0];
  const params = (issue as { params?: { code?: unknown } } | undefined)?.params;
  return {
    ok: false,
    violation: {
      field: formatPath(issue?.path ?? []),
      message: issue?.message ?? 'invalid',
      code: typeof params?.code === 'string' ? params.code : undefined,
    },
  };
}
