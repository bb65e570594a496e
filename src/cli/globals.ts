/**
 * Global flags (`--json`, `--timeout`, …) before and after the command name, and a verb's own flag of the same
 * name. By default commander parses the root's options anywhere in argv, so a flag that the root and a verb both
 * declare (`--timeout`: the request timeout, and the limit of `video wait`, `batch run`, …) always goes to the
 * root and the verb never sees its own value. Instead the root and every group parse their options only before
 * the next command name (commander's positional options), and every command below the root carries hidden
 * copies of the global flags it does not declare itself: `gw models --json` still works, while
 * `gw video wait <id> --timeout 1m` is the wait's limit and `gw --timeout 10s video wait <id>` the request
 * timeout (which a wait without its own --timeout also takes as its limit).
 */
import { CommanderError, Help, Option, type Command } from 'commander';
import type { GlobalOptions } from './context.js';

/** The hidden copies of the root's flags that the commands below it carry. */
const copies = new WeakSet<Option>();

/** Makes the root's flags work after every command name, without taking a verb's flag of the same name. */
export function shareGlobals(root: Command): void {
  const globals = root.options;
  root.enablePositionalOptions();
  root.configureHelp({ subcommandTerm });
  const visit = (cmd: Command): void => {
    cmd.configureHelp({ subcommandTerm });
    // A command with subcommands stops at the subcommand's name, so its copies never take the subcommand's flags.
    if (cmd.commands.length > 0) cmd.enablePositionalOptions();
    for (const g of globals) {
      if (cmd.options.some((o) => o.long === g.long || o.attributeName() === g.attributeName())) continue;
      const copy = new Option(g.flags, g.description).hideHelp();
      // A repeatable flag (`--header`) keeps collecting after the command name.
      if (g.parseArg !== undefined) copy.argParser(g.parseArg);
      copies.add(copy);
      cmd.addOption(copy);
      // `gw models --version` prints the version and stops, as the root's own flag does.
      if (g.long === '--version') cmd.on('option:version', () => printVersion(root));
    }
    for (const sub of cmd.commands) visit(sub);
  };
  for (const sub of root.commands) visit(sub);
}

/** What commander does for the root's `--version` (main() sets exitOverride, so it ends with this error). */
function printVersion(root: Command): never {
  const version = root.version() ?? '';
  const output = root.configureOutput();
  if (output.writeOut !== undefined) output.writeOut(`${version}\n`);
  else process.stdout.write(`${version}\n`);
  throw new CommanderError(0, 'commander.version', version);
}

/** A subcommand's term in its parent's help: `[options]` only when it has options beyond the hidden copies. */
function subcommandTerm(this: Help, cmd: Command): string {
  const term = Help.prototype.subcommandTerm.call(this, cmd);
  return cmd.options.every((o) => copies.has(o)) ? term.replace(' [options]', '') : term;
}

/**
 * The global flags of the command that runs: the root's values (with their defaults), overridden by those given
 * after a command name (the later wins, as commander does for a repeated flag); a repeatable flag (`--header`)
 * keeps every value, in order. A verb's own flag of the same name is not a global one.
 */
export function globalOptions(cmd: Command): GlobalOptions {
  const path: Command[] = [];
  for (let c: Command | null = cmd; c !== null; c = c.parent) path.unshift(c);
  const merged: Record<string, unknown> = {};
  for (const [i, c] of path.entries()) {
    if (i === 0) {
      Object.assign(merged, c.opts());
      continue;
    }
    for (const o of c.options) {
      const key = o.attributeName();
      if (!copies.has(o) || c.getOptionValueSource(key) !== 'cli') continue;
      const value: unknown = c.getOptionValue(key);
      const before = merged[key];
      merged[key] =
        Array.isArray(before) && Array.isArray(value)
          ? [...(before as unknown[]), ...(value as unknown[])]
          : value;
    }
  }
  return merged as unknown as GlobalOptions;
}
