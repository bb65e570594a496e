import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigStore, readConfigFile } from '../../../src/core/config.js';
import { UsageError } from '../../../src/core/errors.js';
import { assertConfigKey } from '../../../src/core/config.js';
import { tempDir } from '../../helpers/tmp.js';

describe('ConfigStore', () => {
  it('writes profiles to a file with mode 0600 that the fast reader sees', async () => {
    const dir = tempDir('gw-conf-');
    const env = { GW_CONFIG_DIR: dir };
    const store = await ConfigStore.open(env);
    store.set('default', 'baseUrl', 'https://gw.example.com');
    store.set('default', 'token', 'sk-profile-secret-1');
    store.set('staging', 'probe.models', 'chat-3.7-plus, clip-1.1-t2v');
    store.use('staging');
    const path = join(dir, 'config.json');
    expect(store.path).toBe(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const read = readConfigFile(env);
    expect(read.current).toBe('staging');
    expect(read.profiles.default?.token).toBe('sk-profile-secret-1');
    expect(read.profiles.staging?.probe?.models).toEqual(['chat-3.7-plus', 'clip-1.1-t2v']);
    store.unset('default', 'token');
    expect(JSON.parse(readFileSync(path, 'utf8')).profiles.default.token).toBeUndefined();
  });

  it('refuses unknown keys naming them', () => {
    expect(() => assertConfigKey('colour')).toThrow(UsageError);
    expect(() => assertConfigKey('colour')).toThrow(/key: "colour" is not a setting/);
  });
});
