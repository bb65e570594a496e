/**
 * `gw api`'s fields, as `gh api` reads them: `-f key=value` is a string, `-F key=value` is typed (true, false,
 * null, an integer or decimal number; `@file` the file's text, `@-` standard input). A key `a[b]` nests an object,
 * `a[]` appends to an array. A GET sends them as query parameters, any other method as a JSON object body.
 */
import { UsageError } from '../../core/errors.js';

/** One field as typed on the command line, with the flag that gave it (`-f` or `-F`). */
export interface RawField {
  flag: '-f' | '-F';
  text: string;
}

/** Reads `@file` / `@-` (bounded, Ctrl-C aware) for a typed field. */
export type ReadText = (path: string, flag: string) => Promise<string>;

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** The typed value of `-F`'s text (gh's rules); `@` reads a file. */
async function typedValue(text: string, read: ReadText): Promise<unknown> {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (NUMBER.test(text) && Number.isFinite(Number(text))) return Number(text);
  if (text.startsWith('@')) return read(text.slice(1), '-F');
  return text;
}

/** `a[b][]` → ['a', 'b', '']; a key that is no such path is a UsageError naming the flag. */
function keyPath(key: string, flag: string): string[] {
  const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (m === null) {
    throw new UsageError(
      `${flag}: "${key}" is not a field name (write key=value, key[sub]=value or key[]=value)`,
      {
        field: flag,
      },
    );
  }
  const rest = [...(m[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] ?? '');
  return [m[1] ?? '', ...rest];
}

/** Puts `value` at `path` in `into` (`''` appends to an array); a clash of shapes is a UsageError. */
function place(
  into: Record<string, unknown>,
  path: string[],
  value: unknown,
  flag: string,
  key: string,
): void {
  let node: Record<string, unknown> | unknown[] = into;
  for (let i = 0; i < path.length; i++) {
    const part = path[i] ?? '';
    const last = i === path.length - 1;
    const next = path[i + 1];
    const fresh = (): unknown => (last ? value : next === '' ? [] : {});
    if (Array.isArray(node)) {
      if (part !== '') throw clash(flag, key);
      const child = fresh();
      node.push(child);
      if (last) return;
      node = child as Record<string, unknown> | unknown[];
      continue;
    }
    if (part === '') throw clash(flag, key);
    if (last) {
      node[part] = value;
      return;
    }
    const existing = node[part];
    const want = next === '' ? 'array' : 'object';
    const have = Array.isArray(existing)
      ? 'array'
      : typeof existing === 'object' && existing !== null
        ? 'object'
        : undefined;
    if (existing !== undefined && have !== want) throw clash(flag, key);
    node[part] ??= fresh();
    node = node[part] as Record<string, unknown> | unknown[];
  }
}

function clash(flag: string, key: string): UsageError {
  return new UsageError(
    `${flag}: "${key}" does not fit the fields given before it (an object and an array at once)`,
    {
      field: flag,
    },
  );
}

/** The fields as one object (order kept), each `-F` value typed. */
export async function parseFields(
  fields: readonly RawField[],
  read: ReadText,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const eq = f.text.indexOf('=');
    if (eq <= 0) {
      throw new UsageError(`${f.flag}: "${f.text.slice(0, 40)}" is not key=value`, { field: f.flag });
    }
    const key = f.text.slice(0, eq);
    const raw = f.text.slice(eq + 1);
    const value = f.flag === '-F' ? await typedValue(raw, read) : raw;
    place(out, keyPath(key, f.flag), value, f.flag, key);
  }
  return out;
}

/**
 * The fields as query parameters (a GET): `a[b]=1` stays `a[b]=1`, arrays repeat their key (`a[]=x&a[]=y`),
 * typed values are written as JSON writes them (`true`, `null`, `3`).
 */
export function fieldsAsQuery(fields: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  const walk = (prefix: string, v: unknown): void => {
    if (Array.isArray(v)) for (const item of v) walk(`${prefix}[]`, item);
    else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(`${prefix}[${k}]`, x);
    else out.push([prefix, typeof v === 'string' ? v : JSON.stringify(v)]);
  };
  for (const [k, v] of Object.entries(fields)) walk(k, v);
  return out;
}
