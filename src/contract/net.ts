import ipaddr from 'ipaddr.js';

/**
 * Whether a host is publicly routable, without and with DNS. Shared by the rules that need it: beta §6 rule 3
 * (`callback_url` must resolve to a public address), beta §2.6 (asset URLs publicly downloadable) and common.md
 * §4 rules 3–4 (image URLs public). Pure apart from the injected resolver.
 */

/** Marks a host only DNS can judge. */
export const NEEDS_DNS: unique symbol = Symbol('needs-dns');

/** A host-name resolver (injectable so tests never touch the network): the addresses a name resolves to. */
export type HostResolver = (host: string) => Promise<string[]>;

const RANGE_WORDS: Readonly<Record<string, string>> = {
  loopback: 'a loopback',
  private: 'a private',
  uniqueLocal: 'a private (unique local)',
  linkLocal: 'a link-local',
  multicast: 'a multicast',
  carrierGradeNat: 'a carrier-grade NAT',
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  reserved: 'a reserved',
};

/** Why an IP address is not publicly routable (`a loopback address`), or undefined when it is public unicast. */
export function nonPublicAddressReason(ip: string): string | undefined {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip); // IPv4-mapped IPv6 is judged as the IPv4 address it carries
  } catch {
    return 'not an IP address';
  }
  const range = addr.range();
  if (range === 'unicast') return undefined;
  return `${RANGE_WORDS[range] ?? `a special-purpose (${range})`} address`;
}

/** A hostname without IPv6 brackets. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Checks a host without the network: IP literals directly, `localhost` (and `*.localhost`) as loopback.
 * Returns a reason when refused, `NEEDS_DNS` when only DNS can tell, undefined when public.
 */
export function hostProblemOffline(hostname: string): string | undefined | typeof NEEDS_DNS {
  const host = bareHost(hostname).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  if (ipaddr.isValid(host)) {
    // URL parsing turns `0x7f.1` and `2130706433` into dotted quads already; anything IP-like is judged here.
    const r = nonPublicAddressReason(host);
    return r !== undefined ? `${host} is ${r}` : undefined;
  }
  return NEEDS_DNS;
}

/** Checks a host, resolving names with `resolve`; every resolved address must be public (§6 rule 3). */
export async function hostProblem(hostname: string, resolve: HostResolver): Promise<string | undefined> {
  const offline = hostProblemOffline(hostname);
  if (offline !== NEEDS_DNS) return offline;
  let addrs: string[];
  try {
    addrs = await resolve(bareHost(hostname));
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return `${hostname} does not resolve${typeof code === 'string' ? ` (${code})` : ''}`;
  }
  if (addrs.length === 0) return `${hostname} does not resolve`;
  for (const a of addrs) {
    const r = nonPublicAddressReason(a);
    if (r !== undefined) return `${hostname} resolves to ${a}, ${r}`;
  }
  return undefined;
}
