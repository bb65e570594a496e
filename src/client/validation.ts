/**
 * Where the contract's rule violations become the client's errors. The contract only answers (a parsed value or
 * the first violation); the resources call these before sending, so a rule-breaking body is a
 * RequestValidationError and nothing goes out.
 */
import type { z } from 'zod';
import { check, type RuleViolation } from '../contract/validate.js';
import { RequestValidationError } from './errors.js';

/**
 * The error for a violation: `<field>: <rule>`. With `documentedCode`, the gateway's code for the rule when the
 * contract gives one (`invalid_request`, the gateway's catch-all, stays `invalid_input` like every local refusal).
 */
export function violationError(
  v: RuleViolation,
  o: { documentedCode?: boolean } = {},
): RequestValidationError {
  const code =
    o.documentedCode === true && v.code !== undefined && v.code !== 'invalid_request' ? v.code : undefined;
  return new RequestValidationError(`${v.field}: ${v.message}`, { field: v.field, rule: v.message, code });
}

/** Checks `value` against a request schema: the parsed value, or a RequestValidationError naming field and rule. */
export function requireValid<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = check(schema, value);
  if (r.ok) return r.value;
  throw violationError(r.violation);
}
