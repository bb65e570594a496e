import { homedir } from 'node:os';
import { join } from 'node:path';

function home(env: Record<string, string | undefined>): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
}

/**
 * Where profiles live: `GW_CONFIG_DIR`, else `$XDG_CONFIG_HOME/gw`, else `~/.config/gw` (`%APPDATA%\gw` on
 * Windows). The file is `config.json` in it. Computed here (not by conf) so reading needs no conf at all.
 */
export function configDir(env: Record<string, string | undefined>): string {
  if (env.GW_CONFIG_DIR !== undefined && env.GW_CONFIG_DIR !== '') return env.GW_CONFIG_DIR;
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'gw');
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg !== undefined && xdg !== '' ? xdg : join(home(env), '.config'), 'gw');
}

/** Where the journal lives: `GW_STATE_DIR`, else `$XDG_STATE_HOME/gw`, else `~/.local/state/gw`. */
export function stateDir(env: Record<string, string | undefined>): string {
  if (env.GW_STATE_DIR !== undefined && env.GW_STATE_DIR !== '') return env.GW_STATE_DIR;
  const xdg = env.XDG_STATE_HOME;
  return join(xdg !== undefined && xdg !== '' ? xdg : join(home(env), '.local', 'state'), 'gw');
}
