import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { ConfigError, UsageError } from './errors.js';
import { checkHeader } from './headers.js';
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
  /** Extra request headers (`gw config set headers.<Name> <value>`), sent to the gateway's origin only. */
  headers?: Record<string, string>;
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
/** A key gw knows: one of CONFIG_KEYS, or `headers.<Name>` (an extra request header). */
export type ConfigKey = (typeof CONFIG_KEYS)[number] | `headers.${string}`;

function defaultsKind(key: ConfigKey): DefaultModelKind | undefined {
  return key.startsWith('defaults.') ? (key.slice('defaults.'.length) as DefaultModelKind) : undefined;
}

/** The header name of a `headers.<Name>` key. */
export function headerKey(key: string): string | undefined {
  return key.startsWith('headers.') ? key.slice('headers.'.length) : undefined;
}

/** Checks that `key` is one gw knows (`headers.<Name>` with a valid header name). */
export function assertConfigKey(key: string): asserts key is ConfigKey {
  const header = headerKey(key);
  if (header !== undefined) {
    checkHeader(header, '', 'key');
    return;
  }
  if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
    throw new UsageError(
      `key: "${key}" is not a setting (one of: ${CONFIG_KEYS.join(', ')}, headers.<Name>)`,
      {
        field: 'key',
      },
    );
  }
}

/**
 * Profiles in `config.json`, mode 0600 (the token is a secret). Each change rewrites the whole file atomically: a
 * temporary file beside it, written, flushed and renamed over it, so a crash or a full disk never leaves half a file.
 * (The `conf` package did this before; loading it cost ~24 ms on every command that reads a profile.)
 */
export class ConfigStore {
  private constructor(
    /** The config file path. */
    readonly path: string,
    private data: ConfigShape,
  ) {}

  /** Reads the config file (an absent file is an empty configuration; nothing is written until a change). */
  static open(env: Record<string, string | undefined>): ConfigStore {
    const { file, ...data } = readConfig(env);
    return new ConfigStore(file, { ...data, profiles: data.profiles ?? {} });
  }

  /** The profile `gw config use` selected (default: `default`). */
  get current(): string {
    return this.data.current ?? 'default';
  }

  /** All profiles by name. */
  get profiles(): Record<string, Profile> {
    return this.data.profiles;
  }

  /** One profile (empty when absent). */
  profile(name: string): Profile {
    return this.profiles[name] ?? {};
  }

  /** Sets a key in a profile. */
  set(profile: string, key: ConfigKey, value: string): void {
    const p: Profile = structuredClone(this.profile(profile));
    const kind = defaultsKind(key);
    const header = headerKey(key);
    if (header !== undefined) {
      p.headers = { ...withoutHeader(p.headers, header), [header]: value };
    } else if (kind !== undefined) {
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
    const header = headerKey(key);
    if (header !== undefined) {
      p.headers = withoutHeader(p.headers, header);
      if (Object.keys(p.headers).length === 0) delete p.headers;
    } else if (kind !== undefined) {
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
    const header = headerKey(key);
    if (header !== undefined) {
      const lower = header.toLowerCase();
      return Object.entries(p.headers ?? {}).find(([n]) => n.toLowerCase() === lower)?.[1];
    }
    if (kind !== undefined) return p.defaults?.[kind];
    if (key.startsWith('probe.')) {
      const v = p.probe?.[key.slice('probe.'.length) as keyof ProbeSettings];
      return Array.isArray(v) ? v.join(',') : v;
    }
    return p[key as 'baseUrl' | 'token' | 'timeout'];
  }

  /** Selects the current profile. */
  use(profile: string): void {
    this.#write({ ...this.data, current: profile });
  }

  /** Replaces a whole profile (used by `gw login`). */
  saveProfile(profile: string, p: Profile): void {
    this.#save(profile, p);
  }

  #save(name: string, p: Profile): void {
    this.#write({ ...this.data, profiles: { ...this.profiles, [name]: p } });
  }

  #write(data: ConfigShape): void {
    const dir = dirname(this.path);
    const tmp = join(dir, `.config.json.${process.pid}.tmp`);
    let opened = false;
    try {
      mkdirSync(dir, { recursive: true });
      // Tab-indented, as conf wrote it. The mode applies to the new file, and the rename puts it in place of an
      // older one whose permissions may be looser.
      const fd = openSync(tmp, 'w', 0o600);
      opened = true;
      try {
        writeFileSync(fd, `${JSON.stringify(data, undefined, '\t')}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.path);
    } catch (e) {
      if (opened) rmSync(tmp, { force: true });
      if (errnoOf(e) === undefined) throw e;
      const err = fsError(e, { path: this.path, action: 'write the configuration file' });
      throw new ConfigError(err.message, { code: err.code, hint: err.hint, cause: e });
    }
    this.data = data;
  }
}

/** A profile's headers without `name` in any case (header names are case-insensitive). */
function withoutHeader(headers: Record<string, string> | undefined, name: string): Record<string, string> {
  const lower = name.toLowerCase();
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([n]) => n.toLowerCase() !== lower));
}

/** The file's shape, checked on every read (unknown keys are kept, so a rewrite never drops them). */
const configSchema = z.looseObject({
  current: z.string().optional(),
  profiles: z
    .record(
      z.string(),
      z.looseObject({
        baseUrl: z.string().optional(),
        token: z.string().optional(),
        timeout: z.string().optional(),
        probe: z
          .looseObject({
            models: z.array(z.string()).optional(),
            chatModel: z.string().optional(),
            responsesModel: z.string().optional(),
            messagesModel: z.string().optional(),
            videoModel: z.string().optional(),
            embeddingModel: z.string().optional(),
          })
          .optional(),
        defaults: z.record(z.string(), z.string()).optional(),
        headers: z.record(z.string(), z.string()).optional(),
      }),
    )
    .optional(),
});

/** The config file's path and contents (an absent file, or one under a file, is an empty configuration). */
function readConfig(env: Record<string, string | undefined>): Partial<ConfigShape> & { file: string } {
  const file = join(configDir(env), 'config.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return { file, profiles: {} };
    const err = fsError(e, { path: file, action: 'read the configuration file' });
    throw new ConfigError(err.message, { code: err.code, hint: err.hint, cause: e });
  }
  return { ...parseConfigText(text, file), file };
}

/** Reads the profiles (the path every command takes). */
export function readConfigFile(env: Record<string, string | undefined>): {
  current: string;
  profiles: Record<string, Profile>;
} {
  const data = readConfig(env);
  return { current: data.current ?? 'default', profiles: data.profiles ?? {} };
}

/** Parses config.json; anything but the shape gw writes is a ConfigError (exit 3) naming the file and the field. */
export function parseConfigText(text: string, path: string): Partial<ConfigShape> {
  const broken = (why: string): ConfigError =>
    new ConfigError(`the configuration file ${path} is damaged: ${why}`, {
      code: 'config_corrupt',
      hint: `fix or remove ${path} (then gw login again)`,
    });
  if (text.trim() === '') return { profiles: {} };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw broken(`not valid JSON (${(e as Error).message})`);
  }
  const parsed = configSchema.safeParse(data);
  if (!parsed.success) throw broken(describeIssue(parsed.error.issues[0]));
  return parsed.data as Partial<ConfigShape>;
}

/** `profile "staging": "probe.models" is not an array`: the first rule the file breaks, in the file's terms. */
function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'not a JSON object';
  const [top, name, ...rest] = issue.path.map(String);
  const kinds: Record<string, string> = { string: 'a string', array: 'an array' };
  const what =
    issue.code === 'invalid_type' ? `is not ${kinds[issue.expected] ?? 'an object'}` : issue.message;
  if (top === undefined) return 'not a JSON object';
  if (top !== 'profiles' || name === undefined) return `"${top}" ${what}`;
  return rest.length === 0 ? `profile "${name}" ${what}` : `profile "${name}": "${rest.join('.')}" ${what}`;
}
