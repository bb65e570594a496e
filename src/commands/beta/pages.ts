/** One page of a beta list answer, as the walk needs it. */
export interface Page<T> {
  items: readonly T[];
  total: number;
  /** The page size the server reports, when it does. */
  pageSize?: number | undefined;
  /** The answer as received (printed with --json when only one page was asked for). */
  body: unknown;
}

/** What a walk collected: the items (without repeats), the last total, the last answer. */
export interface Walk<T> {
  items: T[];
  total: number;
  body: unknown;
}

/**
 * Reads one page from `first`, or (with `all`) every page after it. A page of ids already seen (a server ignoring
 * `page`) ends the walk instead of looping; so does an empty or short page, or every item of the first page's total
 * counted (a total that grows while walking must not loop forever).
 */
export async function walkPages<T>(
  o: {
    first: number;
    pageSize: number | undefined;
    all: boolean;
    /** Called with each page as it comes, except a page of repeats (gw api --paginate prints it). */
    onPage?: (page: Page<T>) => void;
  },
  fetch: (page: number) => Promise<Page<T>>,
  idOf: (item: T) => string,
): Promise<Walk<T>> {
  let items: T[] = [];
  let size = o.pageSize;
  let firstTotal: number | undefined;
  const seen = new Set<string>();
  for (let p = o.first; ; p++) {
    const page = await fetch(p);
    const got = page.items;
    // Without --page-size, the server's default: the size it reports, else the first page's length.
    size ??= page.pageSize ?? got.length;
    const repeated = got.length > 0 && got.every((x) => seen.has(idOf(x)));
    for (const x of got) seen.add(idOf(x));
    if (!repeated) {
      items = items.concat(got);
      o.onPage?.(page);
    }
    firstTotal ??= page.total;
    if (
      !o.all ||
      repeated ||
      got.length === 0 ||
      got.length < size ||
      (o.first - 1) * size + items.length >= firstTotal
    )
      return { items, total: page.total, body: page.body };
  }
}
