import type { ErrorShape, SimReply, SimRequest } from './http.js';

/** A route handler. */
export type RouteHandler = (req: SimRequest, reply: SimReply, signal: AbortSignal) => Promise<void> | void;

interface Route {
  method: string;
  pattern: string;
  parts: string[];
  handler: RouteHandler;
  shape: ErrorShape;
  auth: boolean;
}

/** Options of a route. */
export interface RouteOptions {
  /** Error envelope of this route's family (used for 401 and not-found answers). */
  shape?: ErrorShape;
  /** Default true; the CDN origin and health routes take no token. */
  auth?: boolean;
}

/** A tiny router: `/v1/videos/:id/content` style patterns. */
export class Router {
  readonly #routes: Route[] = [];

  /** Registers a route. */
  add(method: string, pattern: string, handler: RouteHandler, o: RouteOptions = {}): void {
    this.#routes.push({
      method,
      pattern,
      parts: pattern.split('/'),
      handler,
      shape: o.shape ?? 'common',
      auth: o.auth ?? true,
    });
  }

  /** Finds the route for a request; `methodMismatch` when the path exists under another method. */
  match(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | { methodMismatch: boolean } {
    const parts = path.split('/');
    let mismatch = false;
    for (const r of this.#routes) {
      if (r.parts.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const p = r.parts[i] as string;
        const v = parts[i] as string;
        if (p.startsWith(':')) {
          if (v === '') ok = false;
          else params[p.slice(1)] = decodeURIComponent(v);
        } else if (p !== v) ok = false;
        if (!ok) break;
      }
      if (!ok) continue;
      if (r.method !== method) {
        mismatch = true;
        continue;
      }
      return { route: r, params };
    }
    return { methodMismatch: mismatch };
  }
}

export type { Route };
