/**
 * Flag value types for verb definitions: each turns the text commander read into a typed value, or an issue
 * naming the flag and the rule (exit 2, nothing sent). Range rules of the gateway contract stay in the contract
 * (so `--no-validate` can still send a value it rejects); these only check that the text is a value at all.
 */
import * as z from 'zod';
import { parseDuration, parsePositiveDuration } from '../core/duration.js';
import { UsageError } from '../core/errors.js';
import { parseHttpUrl } from '../core/http-url.js';

/** A transform that runs `parse`; the parser's UsageError becomes the flag's issue. */
function issuing<I, T>(parse: (input: I) => T): (input: I, ctx: z.RefinementCtx) => T {
  return (input, ctx) => {
    try {
      return parse(input);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      // The parser's own error (its message, field and code) is what the user sees.
      ctx.addIssue({ code: 'custom', message: e.message, params: { usageError: e } });
      return z.NEVER;
    }
  };
}

/** A string flag whose text a parser turns into a value; the parser's UsageError becomes the flag's issue. */
export function parsed<T>(parse: (text: string) => T): z.ZodPipe<z.ZodString, z.ZodTransform<T, string>> {
  return z.string().transform(issuing(parse));
}

/** A repeatable flag whose values a parser turns into one value (`--budget 5CNY --budget 1USD` → a map). */
export function parsedList<T>(
  parse: (values: string[]) => T,
): z.ZodPipe<z.ZodArray<z.ZodString>, z.ZodTransform<T, string[]>> {
  return z.array(z.string()).transform(issuing(parse));
}

/** A duration (`90`, `90s`, `15m`, `1h`, `1m30s`) in milliseconds. */
export const duration = (field: string): ReturnType<typeof parsed<number>> =>
  parsed((t) => parseDuration(t, field));

/** A duration more than zero, in milliseconds. */
export const positiveDuration = (field: string): ReturnType<typeof parsed<number>> =>
  parsed((t) => parsePositiveDuration(t, field));

/**
 * A duration more than zero, checked now and kept as typed: a verb's own `--timeout`, which the resume command a
 * wait prints repeats as given (`ctx.waitLimitMs` reads it, or the global one).
 */
export const positiveDurationText = (field: string): ReturnType<typeof parsed<string>> =>
  parsed((t) => {
    parsePositiveDuration(t, field);
    return t;
  });

/** An integer (`+3`, `-1`, `42`) in the caller's `min`/`max`, if any; a UsageError naming `field` otherwise. */
export function parseInteger(
  field: string,
  text: string,
  range: { min?: number; max?: number } = {},
): number {
  if (!/^[+-]?\d+$/.test(text.trim()))
    throw new UsageError(`${field}: "${text}" is not an integer`, { field });
  const n = Number(text);
  if (range.min !== undefined && n < range.min)
    throw new UsageError(
      `${field}: must be an integer ${range.max !== undefined ? `from ${range.min} to ${range.max}` : `>= ${range.min}`}`,
      { field },
    );
  if (range.max !== undefined && n > range.max)
    throw new UsageError(
      `${field}: must be an integer ${range.min !== undefined ? `from ${range.min} to ${range.max}` : `<= ${range.max}`}`,
      { field },
    );
  return n;
}

/** An integer flag (`+3`, `-1`, `42`); the range is the contract's (or the caller's `min`/`max`). */
export function int(
  field: string,
  range: { min?: number; max?: number } = {},
): ReturnType<typeof parsed<number>> {
  return parsed((text) => parseInteger(field, text, range));
}

/** A finite number (`0.2`, `1e3`). */
export function num(field: string): ReturnType<typeof parsed<number>> {
  return parsed((text) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n))
      throw new UsageError(`${field}: "${text}" is not a number`, { field });
    return n;
  });
}

/** A repeatable string flag (`--image a --image b`), an empty list when absent. */
export const list = (): z.ZodDefault<z.ZodArray<z.ZodString>> => z.array(z.string()).default([]);

/** An integer flag whose range the contract checks: a number when it looks like an integer, else the text as
 * given (so the contract refuses it with its own rule, and `--no-validate` can still send it). */
export const intOrText = (): z.ZodPipe<z.ZodString, z.ZodTransform<number | string, string>> =>
  z.string().transform((value) => (/^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value));

/** A page number or size: an integer >= 1. */
export function positiveInt(field: string): ReturnType<typeof parsed<number>> {
  return parsed((value) => {
    const t = value.trim();
    if (!/^-?\d+$/.test(t) || Number(t) < 1)
      throw new UsageError(`${field}: must be an integer >= 1`, { field });
    return Number(t);
  });
}

/** `--tolerance 10%` (or `10`): a fraction (`gw load`, `gw load compare`, `gw probe --baseline`). */
export function parseTolerance(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*%?$/.exec(text.trim());
  const refuse = (rule: string): never => {
    throw new UsageError(`--tolerance: ${rule}`, { field: '--tolerance' });
  };
  if (!m) return refuse(`"${text}" must be a percentage such as 10%`);
  const v = Number(m[1]);
  if (v > 1000) refuse(`"${text}" must be at most 1000%`);
  return v / 100;
}

/** An absolute http(s) URL (`--otlp`, `--remote-write`). */
export const httpUrl = (field: string): ReturnType<typeof parsed<string>> =>
  parsed((t) => parseHttpUrl(t, field));
