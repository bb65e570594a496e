import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Conf from 'conf';
import { ConfigError, UsageError } from './errors.js';
import { errnoOf, fsError } from './fs-errors.js';
import { configDir } from './paths.js';

/** Settings the probe reads from a profile (`gw config set probe.chatModel …`). */
export interface ProbeSettings {
  models?: string[];
  chatModel?: string;
  responsesModel?: string;
  messagesModel?: string;
  videoModel?: string;
  embeddingModel?: string;
}

/** The kinds of command a profile can name a default model for (`gw config set defaults.chat …`). */
export const DEFAULT_MODEL_KINDS = [
  'chat',
  'responses',
  'messages',
  'embed',
  'image',
  'video',
  'i2v',
  'beta',
] as const;
export type DefaultModelKind = (typeof DEFAULT_MODEL_KINDS)[number];

/** One named profile. */
export interface Profile {
  baseUrl?: string;
  token?: string;
  timeout?: string;
  probe?: ProbeSettings;
  /** Models used when `-m` is omitted. */
  defaults?: Partial<Record<DefaultModelKind, string>>;
}

interface ConfigShape {
  current?: string;
  profiles: Record<string, Profile>;
}

/** Keys `gw config set|get|unset` accept. */
export const CONFIG_KEYS = [
  'baseUrl',
  'token',
  'timeout',
  'probe.models',
  'probe.chatModel',
  'probe.responsesModel',
  'probe.messagesModel',
  'probe.videoModel',
  'probe.embeddingModel',
  ...DEFAULT_MODEL_KINDS.map((k) => `defaults.${k}` as const),
] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

function defaultsKind(key: ConfigKey): DefaultModelKind | undefined {
  return key.startsWith('defaults.') ? (key.slice('defaults.'.length) as DefaultModelKind) : undefined;
}

/** Checks that `key` is one gw knows. */
export function assertConfigKey(key: string): asserts key is ConfigKey {
  if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
    throw new UsageError(`key: "${key}" is not a setting (one of: ${CONFIG_KEYS.join(', ')})`, {
      field: 'key',
    });
  }
}

/**
 * Profiles stored with conf, file mode 0600 (the token is a secret). conf is loaded only when a command needs
 * a profile, so `gw --help` and env-only runs do not pay for it.
 */
export class ConfigStore {
  private constructor(private readonly conf: Conf<ConfigShape>) {}

  /** Opens (or creates) the config file. */
  static async open(env: Record<string, string | undefined>): Promise<ConfigStore> {
    const { default: Conf } = await import('conf');
    // The same checks as the fast path, so a damaged file is named (conf would throw a bare SyntaxError).
    readConfigFile(env);
    let conf: Conf<ConfigShape>;
    try {
      conf = new Conf<ConfigShape>({
        projectName: 'gw',
        projectSuffix: '',
        configName: 'config',
        configFileMode: 0o600,
        defaults: { profiles: {} },
        cwd: configDir(env),
      });
    } catch (e) {
      if (errnoOf(e) === undefined) throw e;
      const err = fsError(e, { path: configDir(env), action: 'open the configuration in' });
      throw new ConfigError(err.message, { code: err.code, hint: err.hint, cause: e });
    }
    return new ConfigStore(conf);
  }

  /** The config file path. */
  get path(): string {
    return this.conf.path;
  }

  /** The profile `gw config use` selected (default: `default`). */
  get current(): string {
    return this.conf.get('current') ?? 'default';
  }

  /** All profiles by name. */
  get profiles(): Record<string, Profile> {
    return this.conf.get('profiles');
  }

  /** One profile (empty when absent). */
  profile(name: string): Profile {
    return this.profiles[name] ?? {};
  }

  /** Sets a key in a profile. */
  set(profile: string, key: ConfigKey, value: string): void {
    const p: Profile = structuredClone(this.profile(profile));
    const kind = defaultsKind(key);
    if (kind !== undefined) {
      p.defaults = { ...p.defaults, [kind]: value };
    } else if (key.startsWith('probe.')) {
      const sub = key.slice('probe.'.length) as keyof ProbeSettings;
      const probe: ProbeSettings = { ...p.probe };
      if (sub === 'models')
        probe.models = value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
      else probe[sub] = value;
      p.probe = probe;
    } else {
      p[key as 'baseUrl' | 'token' | 'timeout'] = value;
    }
    this.#save(profile, p);
  }

  /** Removes a key from a profile. */
  unset(profile: string, key: ConfigKey): void {
    const p: Profile = structuredClone(this.profile(profile));
    const kind = defaultsKind(key);
    if (kind !== undefined) {
      if (p.defaults) delete p.defaults[kind];
    } else if (key.startsWith('probe.')) {
      if (p.probe) delete p.probe[key.slice('probe.'.length) as keyof ProbeSettings];
    } else {
      delete p[key as 'baseUrl' | 'token' | 'timeout'];
    }
    this.#save(profile, p);
  }

  /** Reads a key of a profile as text. */
  get(profile: string, key: ConfigKey): string | undefined {
    const p = this.profile(profile);
    const kind = defaultsKind(key);
    if (kind !== undefined) return p.defaults?.[kind];
    if (key.startsWith('probe.')) {
      const v = p.probe?.[key.slice('probe.'.length) as keyof ProbeSettings];
      return Array.isArray(v) ? v.join(',') : v;
    }
    return p[key as 'baseUrl' | 'token' | 'timeout'];
  }

  /** Selects the current profile. */
  use(profile: string): void {
    this.conf.set('current', profile);
    this.#fixMode();
  }

  /** Replaces a whole profile (used by `gw login`). */
  saveProfile(profile: string, p: Profile): void {
    this.#save(profile, p);
  }

  #save(name: string, p: Profile): void {
    this.conf.set('profiles', { ...this.profiles, [name]: p });
    this.#fixMode();
  }

  // conf applies the mode when it creates the file; make sure an older file is tightened too.
  #fixMode(): void {
    if (existsSync(this.path)) chmodSync(this.path, 0o600);
  }
}

/** Reads the profiles without loading conf (the fast path every command takes). */
export function readConfigFile(env: Record<string, string | undefined>): {
  current: string;
  profiles: Record<string, Profile>;
} {
  const path = join(configDir(env), 'config.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return { current: 'default', profiles: {} };
    const err = fsError(e, { path, action: 'read the configuration file' });
    throw new ConfigError(err.message, { code: err.code, hint: err.hint, cause: e });
  }
  const data = parseConfigText(text, path);
  return { current: data.current ?? 'default', profiles: data.profiles ?? {} };
}

/** Parses config.json; anything but an object of profiles is a ConfigError (exit 3) naming the file. */
export function parseConfigText(text: string, path: string): Partial<ConfigShape> {
  const broken = (why: string): ConfigError =>
    new ConfigError(`the configuration file ${path} is damaged: ${why}`, {
      code: 'config_corrupt',
      hint: `fix or remove ${path} (then gw login again)`,
    });
  if (text.trim() === '') return {};
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw broken(`not valid JSON (${(e as Error).message})`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw broken('not a JSON object');
  const d = data as Record<string, unknown>;
  if (d.current !== undefined && typeof d.current !== 'string') throw broken('"current" is not a string');
  const profiles = d.profiles;
  if (profiles !== undefined) {
    if (profiles === null || typeof profiles !== 'object' || Array.isArray(profiles)) {
      throw broken('"profiles" is not an object');
    }
    for (const [name, p] of Object.entries(profiles)) {
      if (p === null || typeof p !== 'object' || Array.isArray(p))
        throw broken(`profile "${name}" is not an object`);
    }
  }
  return d;
}
