import { ALL_MODELS } from '../../contract/catalog.js';
import type { Sim } from '../server.js';

const CREATED = 1_767_225_600; // 2026-01-01

function owner(id: string): string {
  if (id.startsWith('alpha-')) return 'alpha';
  if (id.startsWith('gamma-')) return 'beta';
  return 'gateway';
}

/** common.md §4: GET /v1/models lists the models visible to the token. */
export function registerModelRoutes(sim: Sim): void {
  sim.router.add('GET', '/v1/models', (req, reply) => {
    reply.json(200, {
      object: 'list',
      data: [
        ...new Set([
          ...ALL_MODELS,
          ...Object.keys(sim.config.extraModels ?? {}),
          ...(sim.config.misconfiguredModels ?? []),
        ]),
      ]
        .filter((m) => req.canSee(m) && !sim.vanished(m))
        .map((id) => ({
          id,
          object: 'model',
          created: CREATED,
          owned_by: owner(id),
        })),
    });
  });
}
