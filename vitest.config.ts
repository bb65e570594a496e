import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/cleanup.ts'],
    env: { NO_COLOR: '1', GW_TOKEN: '', GW_BASE_URL: '', GW_PROFILE: '' },
  },
});
