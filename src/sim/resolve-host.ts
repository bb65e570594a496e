/** The simulator's DNS lookup for callback hosts (its own: the simulator depends on the contract only). */
import * as dns from 'node:dns/promises';
export async function resolveHost(host: string): Promise<string[]> {
  const answers = await dns.lookup(host, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}
