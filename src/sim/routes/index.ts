import type { Sim } from '../server.js';
import { registerModelRoutes } from './models.js';
import { registerAlphaRoutes } from './alpha.js';
import { registerTextRoutes } from './text.js';
import { registerImageRoutes } from './images.js';
import { registerBetaTaskRoutes } from './beta-tasks.js';
import { registerBetaAssetRoutes } from './beta-assets.js';
import { registerVideoRoutes } from './videos.js';

/** Registers every route family. Each family lives in its own module. */
export function registerAllRoutes(sim: Sim): void {
  registerModelRoutes(sim);
  registerVideoRoutes(sim);
  registerAlphaRoutes(sim);
  registerTextRoutes(sim);
  registerImageRoutes(sim);
  registerBetaTaskRoutes(sim);
  registerBetaAssetRoutes(sim);
}
