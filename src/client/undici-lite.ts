/**
 * The parts of undici gw uses, loaded without undici's index. The index also loads fetch, WebSocket,
 * EventSource, the mock agents, the HTTP caches and SQLite: ~20 ms and several MB at the start of every command
 * that makes a request (issue 9's start-up and memory budgets).
 */
import type { Dispatcher } from 'undici';
import AgentImpl from 'undici/lib/dispatcher/agent.js';
import DispatcherImpl from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import redirectImpl from 'undici/lib/interceptor/redirect.js';

// What undici's index does so that every dispatcher (and a composed one) has request(), stream() …
Object.assign(DispatcherImpl.prototype, api);

/** undici's Dispatcher base class, with request(), stream() … (for gw's own dispatchers). */
export const DispatcherBase = DispatcherImpl;

/** undici's Agent (a connection pool per origin). */
export const Agent = AgentImpl;

/** undici's redirect interceptor. */
export const redirect = redirectImpl;

/** undici's `request(url, options)`, always with an explicit dispatcher (never the global one). */
export function request(
  url: string,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher },
): Promise<Dispatcher.ResponseData> {
  const u = new URL(url);
  const { dispatcher, ...rest } = options;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}
