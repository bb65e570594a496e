/**
 * `gw api --paginate`: the list routes of the gateway's documents that page, and how each pages. The beta task
 * list pages with the query's `page_num`/`page_size` and answers `{items, total}`; the asset library's
 * `ListAssets` action with the body's `PageNumber`/`PageSize` and answers `Result.{Items, TotalCount, PageSize}`.
 * No other documented route pages (`/v1/models` answers every model at once).
 */
import type { GatewayClient, Method } from '../../client/gateway-client.js';
import { UsageError } from '../../core/errors.js';
import { walkPages, type Page } from '../beta/pages.js';

/** One call of a paged route: its path with query, and its JSON body (if any). */
interface PageCall {
  path: string;
  body: Record<string, unknown> | undefined;
}

interface Pager {
  /** The first page asked for (the call's own page number, else 1) and the page size it asked for. */
  first: number;
  pageSize: number | undefined;
  call: (page: number) => PageCall;
  read: (json: unknown) => Omit<Page<unknown>, 'body'>;
  idOf: (item: unknown) => string;
}

const TASKS = /^\/beta\/api\/v3\/contents\/generations\/tasks\/?$/;
const ASSETS = /^\/beta\/?$/;

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const num = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
};
const idOf = (key: string) => (item: unknown) => JSON.stringify(obj(item)[key] ?? item);

/** How `method path` pages, or a UsageError naming --paginate when it does not. */
export function pagerFor(method: Method, path: string, body: Record<string, unknown> | undefined): Pager {
  const u = new URL(path, 'http://gateway.invalid');
  if (method === 'GET' && TASKS.test(u.pathname)) {
    return {
      first: num(u.searchParams.get('page_num')) ?? 1,
      pageSize: num(u.searchParams.get('page_size')),
      call: (page) => {
        u.searchParams.set('page_num', String(page));
        return { path: `${u.pathname}${u.search}`, body: undefined };
      },
      read: (json) => {
        const d = obj(json);
        const items = Array.isArray(d.items) ? d.items : [];
        return { items, total: typeof d.total === 'number' ? d.total : items.length };
      },
      idOf: idOf('id'),
    };
  }
  if (method === 'POST' && ASSETS.test(u.pathname) && u.searchParams.get('Action') === 'ListAssets') {
    return {
      first: num(body?.PageNumber) ?? 1,
      pageSize: num(body?.PageSize),
      call: (page) => ({ path, body: { ...body, PageNumber: page } }),
      read: (json) => {
        const r = obj(obj(json).Result);
        const items = Array.isArray(r.Items) ? r.Items : [];
        const total = typeof r.TotalCount === 'number' ? r.TotalCount : items.length;
        return { items, total, pageSize: num(r.PageSize) };
      },
      idOf: idOf('Id'),
    };
  }
  throw new UsageError(
    `--paginate: ${method} ${u.pathname} does not page; the routes that do are GET /beta/api/v3/contents/generations/tasks (page_num) and POST /beta/?Action=ListAssets (PageNumber)`,
    { field: '--paginate' },
  );
}

/**
 * Walks every page from the first asked for, handing each answer's text (unchanged) to `print` as it comes. Ends
 * on an empty or short page, a page of items already seen (a server ignoring the page number), or the total.
 */
export async function paginate(
  client: GatewayClient,
  o: { method: Method; pager: Pager; signal: AbortSignal },
  print: (text: string) => void,
): Promise<void> {
  const { pager } = o;
  await walkPages(
    {
      first: pager.first,
      pageSize: pager.pageSize,
      all: true,
      // A page of repeats (a server ignoring the page number) ends the walk unprinted.
      onPage: (p) => print(p.body as string),
    },
    async (page) => {
      const c = pager.call(page);
      const res = await client.request({ method: o.method, path: c.path, body: c.body, signal: o.signal });
      // The page's body is the answer's text as received: what gw api prints.
      return { ...pager.read(res.data), body: res.text ?? '' };
    },
    pager.idOf,
  );
}
