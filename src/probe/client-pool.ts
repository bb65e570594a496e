/**
 * Clients for a watch (`gw probe --every`): the checks of one run each get their own client, as in a single run,
 * but the clients (and their connections) are reused run after run instead of being made anew. New clients every
 * run grew the resident set by ~50 KB a run (undici's per-connection parser memory outlives the closed clients).
 */
import type { Exchange, GatewayClient } from '../client/gateway-client.js';

interface Slot {
  client: GatewayClient;
  /** Where the exchanges of the check that holds the client go. */
  target: (x: Exchange) => void;
}

type Make = (c: { validate: boolean; onExchange: (x: Exchange) => void }) => Promise<GatewayClient>;

const ignore = (): void => {};

/** A pool of clients, one per concurrent check, keyed by the validation flag. */
export class ClientPool {
  readonly #free = new Map<boolean, Slot[]>();
  readonly #busy: Array<[boolean, Slot]> = [];

  constructor(private readonly make: Make) {}

  /** A client for one check of the current run; its exchanges go to `c.onExchange`. */
  async get(c: { validate: boolean; onExchange: (x: Exchange) => void }): Promise<GatewayClient> {
    let slot = this.#free.get(c.validate)?.pop();
    if (slot === undefined) {
      const fresh: Slot = { client: undefined as unknown as GatewayClient, target: ignore };
      fresh.client = await this.make({ validate: c.validate, onExchange: (x) => fresh.target(x) });
      slot = fresh;
    }
    slot.target = c.onExchange;
    this.#busy.push([c.validate, slot]);
    return slot.client;
  }

  /** Ends a run: every client is free again (a late exchange of the old run is ignored). */
  release(): void {
    for (const [validate, slot] of this.#busy.splice(0)) {
      slot.target = ignore;
      let list = this.#free.get(validate);
      if (list === undefined) this.#free.set(validate, (list = []));
      list.push(slot);
    }
  }

  /** Clients made so far. */
  get size(): number {
    let n = this.#busy.length;
    for (const l of this.#free.values()) n += l.length;
    return n;
  }
}
