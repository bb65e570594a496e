import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigStore, readConfigFile } from '../../../src/core/config.js';
import { ConfigError, UsageError } from '../../../src/core/errors.js';
import { assertConfigKey } from '../../../src/core/config.js';
import { tempDir } from '../../helpers/tmp.js';

describe('ConfigStore', () => {
  it('writes profiles to a file with mode 0600 that the fast reader sees', () => {
    const dir = tempDir('gw-conf-');
    const env = { GW_CONFIG_DIR: dir };
    const store = ConfigStore.open(env);
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

  it('rewrites an older file with looser permissions as 0600 and keeps the keys it does not know', () => {
    const dir = tempDir('gw-conf-');
    const path = join(dir, 'config.json');
    writeFileSync(
      path,
      JSON.stringify({ later: 1, profiles: { a: { token: 'sk-a-123456', labels: ['X: y'] } } }),
    );
    chmodSync(path, 0o644);
    ConfigStore.open({ GW_CONFIG_DIR: dir }).set('a', 'timeout', '30s');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      later: 1,
      profiles: { a: { token: 'sk-a-123456', labels: ['X: y'], timeout: '30s' } },
    });
  });

  it('a write that fails is a ConfigError naming the file, and the file before it stays whole', () => {
    const dir = tempDir('gw-conf-');
    const env = { GW_CONFIG_DIR: dir };
    const store = ConfigStore.open(env);
    store.set('default', 'token', 'sk-before-123456');
    const before = readFileSync(join(dir, 'config.json'), 'utf8');
    // The temporary file's name taken by a directory: the write fails before anything is replaced.
    mkdirSync(join(dir, `.config.json.${process.pid}.tmp`));
    expect(() => store.set('default', 'token', 'sk-after-123456')).toThrow(ConfigError);
    expect(() => store.set('default', 'token', 'sk-after-123456')).toThrow(join(dir, 'config.json'));
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(before);
    expect(readConfigFile(env).profiles.default?.token).toBe('sk-before-123456');
  });

  it('refuses unknown keys naming them', () => {
    expect(() => assertConfigKey('colour')).toThrow(UsageError);
    expect(() => assertConfigKey('colour')).toThrow(/key: "colour" is not a setting/);
  });
});
