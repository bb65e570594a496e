import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files in parallel: vitest's default (one worker per core, less one) runs them one after another on a
 * 2-core machine, although most e2e files spend their time waiting on sockets and child processes. One more
 * worker than cores, at least 3. Forks, not threads: main() installs process-wide signal handlers, and
 * in-process runs change the working directory.
 */
const workers = Math.max(3, availableParallelism() + 1);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: workers,
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/cleanup.ts'],
    env: { NO_COLOR: '1', GW_TOKEN: '', GW_BASE_URL: '', GW_PROFILE: '' },
  },
});
