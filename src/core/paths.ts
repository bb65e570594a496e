import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ConfigError } from './errors.js';

/**
 * The home directory, always absolute: `HOME` when it is an absolute path, else the account's home from the
 * password database. An empty or relative HOME never makes gw write its config or journal under the current
 * directory (where a token could end up committed to a repository); without any home it is a ConfigError.
 */
function home(env: Record<string, string | undefined>): string {
  const candidates = [env.HOME, safe(homedir), safe(() => userInfo().homedir)];
  for (const c of candidates) if (c !== undefined && c !== '' && isAbsolute(c)) return c;
  throw new ConfigError('no home directory: HOME is empty or relative and the account has none', {
    code: 'no_home',
    hint: 'set HOME to an absolute path, or GW_CONFIG_DIR and GW_STATE_DIR',
  });
}

function safe(f: () => string): string | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** An XDG base directory: only an absolute path counts (the XDG specification ignores relative ones). */
function xdg(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' && isAbsolute(value) ? value : undefined;
}

/**
 * Where profiles live: `GW_CONFIG_DIR`, else `$XDG_CONFIG_HOME/gw`, else `~/.config/gw` (`%APPDATA%\gw` on
 * Windows). The file is `config.json` in it. Computed here (not by conf) so reading needs no conf at all.
 */
export function configDir(env: Record<string, string | undefined>): string {
  if (env.GW_CONFIG_DIR !== undefined && env.GW_CONFIG_DIR !== '') return env.GW_CONFIG_DIR;
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'gw');
  return join(xdg(env.XDG_CONFIG_HOME) ?? join(home(env), '.config'), 'gw');
}

/** Where the journal lives: `GW_STATE_DIR`, else `$XDG_STATE_HOME/gw`, else `~/.local/state/gw`. */
export function stateDir(env: Record<string, string | undefined>): string {
  if (env.GW_STATE_DIR !== undefined && env.GW_STATE_DIR !== '') return env.GW_STATE_DIR;
  return join(xdg(env.XDG_STATE_HOME) ?? join(home(env), '.local', 'state'), 'gw');
}
