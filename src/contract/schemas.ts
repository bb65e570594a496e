/** The contract's schemas (zod) and types, by area, for library users. */
export * as models from './models.js';
export * as text from './text.js';
export * as video from './video.js';
export * as alpha from './alpha.js';
export * as beta from './beta.js';
export * as betaAssets from './beta-assets.js';
