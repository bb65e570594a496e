import { afterAll } from 'vitest';
import { removeTempDirs } from './tmp.js';

// Each test file removes the config/state/bin directories its helpers created.
afterAll(() => removeTempDirs());
