import type { Method } from '../../client/gateway-client.js';
import { UsageError } from '../../core/errors.js';
import { LOCAL_LIMITS, readLocalFile, readStream } from '../../core/local-file.js';
import type { Context } from '../../cli/context.js';
import type { Flags } from '../../cli/verb.js';
import { fieldsAsQuery, parseFields, type RawField } from './fields.js';
import { paginate, pagerFor } from './paginate.js';
import type { apiFlags } from './index.js';

/**
 * A path on the gateway: from `/`, joined to the base URL as it is. A full URL is refused (the token and headers
 * belong to the gateway's origin only); `//host/…` would read as another host to a reader, so it is refused too.
 */
function checkPath(path: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//')) {
    throw new UsageError(`path: "${path.slice(0, 80)}" is a URL; gw api calls paths on the gateway only`, {
      field: 'path',
      hint: 'give the path from / (e.g. /v1/models); --base-url chooses the gateway',
    });
  }
  if (!path.startsWith('/')) {
    throw new UsageError(`path: "${path.slice(0, 80)}" must start with /`, {
      field: 'path',
      hint: `gw api /${path}`,
    });
  }
  return path;
}

/** Standard input or a file, bounded (--input, -F key=@file). */
async function readInput(ctx: Context, path: string, flag: string): Promise<Buffer> {
  if (path === '-') {
    const what = `${flag} - (standard input)`;
    const o = { what, field: flag, limit: LOCAL_LIMITS.body, signal: ctx.signal };
    return readStream(ctx.io.stdin, o);
  }
  return readLocalFile(path, { flag, field: flag, limit: LOCAL_LIMITS.body, signal: ctx.signal });
}

/** `path` with `pairs` added to its query. */
function withQuery(path: string, pairs: [string, string][]): string {
  if (pairs.length === 0) return path;
  const q = new URLSearchParams(pairs).toString();
  return `${path}${path.includes('?') ? '&' : '?'}${q}`;
}

/** Calls the route and prints the answer as it arrives (each page with --paginate). */
export default async function run(
  ctx: Context,
  opts: Flags<typeof apiFlags>,
  rawPath: string,
): Promise<void> {
  const path = checkPath(rawPath);
  const raw: RawField[] = [
    ...(opts.rawField ?? []).map((text) => ({ flag: '-f' as const, text })),
    ...(opts.field ?? []).map((text) => ({ flag: '-F' as const, text })),
  ];
  const fields = await parseFields(raw, async (file, flag) =>
    (await readInput(ctx, file, flag)).toString('utf8'),
  );
  const hasFields = raw.length > 0;
  const input = opts.input !== undefined ? await readInput(ctx, opts.input, '--input') : undefined;
  const method: Method = opts.method ?? (hasFields || input !== undefined ? 'POST' : 'GET');
  // As gh: fields are the body, unless the method has none (GET, HEAD) or --input is the body.
  const inQuery = method === 'GET' || method === 'HEAD' || input !== undefined;
  if (input !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw new UsageError(`--input: a ${method} request has no body`, {
      field: '--input',
      hint: 'add -X POST',
    });
  }
  const target = inQuery ? withQuery(path, fieldsAsQuery(fields)) : path;
  const body = input ?? (!inQuery && hasFields ? JSON.stringify(fields) : undefined);
  const client = await ctx.client({ bodyHeaders: true });
  const print = (text: string): void => ctx.out.stream(text);
  if (opts.paginate === true) {
    const json = body === undefined ? undefined : parseBody(body);
    const pager = pagerFor(method, target, json);
    await paginate(client, { method, pager, signal: ctx.signal }, (text) =>
      print(text.endsWith('\n') ? text : `${text}\n`),
    );
    ctx.out.flush();
    return;
  }
  const res = await client.call({ method, path: target, body, signal: ctx.signal });
  // The bytes as sent (a binary body too); Output decides what a terminal is shown.
  for await (const chunk of res.chunks) ctx.out.streamBytes(chunk);
  ctx.out.endBytes();
}

/** The JSON object a paged POST sends (its page number is set per page). */
function parseBody(body: string | Buffer): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(body.toString());
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new UsageError('--paginate: the body of a paged POST must be a JSON object', { field: '--paginate' });
}
