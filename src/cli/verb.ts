/**
 * One way to declare a verb: a small definition (name, description, arguments, flags as one zod schema,
 * examples) and a handler loaded only when the verb runs. `verbCommand()` turns a definition into the commander
 * Command: commander still splits argv, then the definition's schema parses the option values (a failure is a
 * UsageError, exit 2, naming the flag and the rule, before anything is sent). `gw <group> --help` and shell
 * completion read the definition and never load a handler.
 */
import { Argument, Command, Option } from 'commander';
import * as z from 'zod';
import { RequestValidationError } from '../client/errors.js';
import { UsageError } from '../core/errors.js';
import type { Context, Runtime } from './context.js';

/** How a flag is spelled and explained; attached to the flag's zod schema with `flag()`. */
export interface FlagMeta {
  /** Commander's spelling, e.g. `-m, --model <model>`, `--wait`, `--ids <a,b>`. */
  flag: string;
  /** The help text. */
  help: string;
  /** A `--no-<flag>` twin and its help (the value is then true, false or undefined). */
  negate?: string;
  /** Repeatable: `collect` keeps each value, `csv` also splits values at commas. */
  repeat?: 'collect' | 'csv';
  /** Shown as `(default: …)` in help when the default is not the schema's own. */
  defaultText?: string;
  /** Not listed in help. */
  hidden?: boolean;
  /**
   * The values shell completion offers for a text flag whose values a contract rule checks (the flag stays text,
   * so --no-validate can still send another): the list the contract checks against, never a copy of it.
   */
  offer?: readonly string[];
  /**
   * The request fields this flag fills, as the contract names them with `[]` for any index (`GroupId`,
   * `messages[].content[].image_url.url`): a contract rule broken there is reported as `--flag: <rule>`.
   */
  fills?: readonly string[];
}

/** Ties each flag's schema to its spelling and help. */
export const flagRegistry = new WeakMap<z.ZodType, FlagMeta>();

/** The values completion offers for an option built from a flag with `offer` (commander has no place for them). */
export const offeredValues = new WeakMap<Option, readonly string[]>();

/** Declares one flag: its schema (what values mean, default, range) and how it is spelled and explained. */
export function flag<T extends z.ZodType>(schema: T, meta: FlagMeta): T {
  flagRegistry.set(schema, meta);
  return schema;
}

/** A positional argument: `<id>`, `[prompt...]`; `choices` are checked by commander and offered by completion. */
export interface ArgSpec {
  name: string;
  help: string;
  choices?: readonly string[];
}

/**
 * What a handler gets after the flags parsed: the context, the parsed flags, then the positional arguments. It
 * returns the exit code (or nothing for 0), or a promise of it.
 */
export type VerbHandler<F extends z.ZodObject = z.ZodObject, A extends unknown[] = never[]> = (
  ctx: Context,
  flags: z.output<F>,
  ...args: A
) => Promise<number | void> | number | void;

/** A handler module: its default export runs the verb. */
export interface HandlerModule<F extends z.ZodObject, A extends unknown[]> {
  default: VerbHandler<F, A>;
}

/** The declaration of one verb. */
export interface VerbSpec<F extends z.ZodObject = z.ZodObject, A extends unknown[] = never[]> {
  name: string;
  description: string;
  aliases?: readonly string[];
  args?: readonly ArgSpec[];
  /** The flags, as one zod object of `flag(...)` fields (keys are commander's attribute names). */
  flags?: F;
  /** Text between the options and the examples (output shape, caveats). */
  notes?: string;
  /** The lines `--help` shows under "Examples:" (each works when pasted in order against `gw sim`). */
  examples?: readonly string[];
  /** The handler, loaded only when the verb runs. */
  handler: () => Promise<HandlerModule<F, A>>;
  /** Extra commander set-up the definition cannot say (unknown options passed through, …). */
  configure?: (cmd: Command) => void;
  /**
   * Flags of a subcommand that may also be written before its name, where commander gives them to the parent
   * (`gw load --out x merge a.json`): the parent's value is parsed by this verb's schema when its own is absent.
   */
  inherit?: readonly string[];
}

/** Declares a verb (an identity that keeps the flags' type for the handler module). */
export function defineVerb<F extends z.ZodObject, A extends unknown[] = never[]>(
  spec: VerbSpec<F, A>,
): VerbSpec<F, A> {
  return spec;
}

/** The parsed flags of a verb's schema, for its handler module (`Flags<typeof embedFlags>`). */
export type Flags<F extends z.ZodObject> = z.output<F>;

/** The commands built from a definition, with it (tests and completion read it). */
export const declared = new WeakMap<Command, AnySpec>();

/** A definition with its types erased (what the builder and completion read). */
export type AnySpec = VerbSpec<z.ZodObject, unknown[]>;

/** The enum values of a schema (through optional/default/array wrappers), if it is an enum. */
export function enumValues(schema: z.ZodType): readonly string[] | undefined {
  let s: unknown = schema;
  for (let i = 0; i < 8 && s !== undefined; i++) {
    if (s instanceof z.ZodEnum) return s.options.map(String);
    if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable)
      s = (s as z.ZodOptional).unwrap();
    else if (s instanceof z.ZodArray) s = s.element;
    else if (s instanceof z.ZodPipe) s = s.in;
    else return undefined;
  }
  return undefined;
}

function defaultOf(schema: z.ZodType): unknown {
  return schema instanceof z.ZodDefault ? schema.def.defaultValue : undefined;
}

function splitCsv(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The commander Options of one flag (two for a negatable one). */
function optionsOf(key: string, schema: z.ZodType): Option[] {
  const meta = flagRegistry.get(schema);
  if (meta === undefined) throw new Error(`flag ${key}: declare it with flag(schema, { flag, help })`);
  const opt = new Option(meta.flag, meta.help);
  if (opt.attributeName() !== key) {
    throw new Error(`flag ${key}: spelled ${meta.flag}, which commander names ${opt.attributeName()}`);
  }
  const choices = enumValues(schema);
  if (choices !== undefined && meta.repeat === undefined) opt.choices(choices);
  if (meta.repeat === 'collect') opt.argParser((v: string, acc: string[] | undefined) => [...(acc ?? []), v]);
  if (meta.repeat === 'csv')
    opt.argParser((v: string, acc: string[] | undefined) => [...(acc ?? []), ...splitCsv(v)]);
  const def = defaultOf(schema);
  // Shown in help only: the value itself comes from the schema (commander's default is dropped before parsing).
  if (meta.defaultText !== undefined) opt.default(undefined, meta.defaultText);
  else if (def !== undefined && !(Array.isArray(def) && def.length === 0) && def !== false) opt.default(def);
  if (meta.hidden === true) opt.hideHelp();
  if (meta.offer !== undefined) offeredValues.set(opt, meta.offer);
  // A flag the schema cannot do without is mandatory: commander then says so before anything else runs.
  if (!schema.safeParse(undefined).success) opt.makeOptionMandatory();
  const out = [opt];
  if (meta.negate !== undefined) out.push(new Option(`--no-${opt.name()}`, meta.negate));
  return out;
}

/** The shape of a flags object (empty when the verb has none). */
function shapeOf(spec: AnySpec): Record<string, z.ZodType> {
  return spec.flags?.shape ?? {};
}

/** The name errors use for a flag: its long spelling with the dashes (`--max-tokens`), as users type it. */
function flagName(spec: AnySpec, key: string): string {
  const schema = shapeOf(spec)[key];
  const meta = schema !== undefined ? flagRegistry.get(schema) : undefined;
  return (meta !== undefined ? longFlag(meta) : undefined) ?? key;
}

/**
 * `e` reworded under `flag`: `<flag>: <rule>`, or `<flag>: <field>: <rule>` when the field lies deeper than what
 * the flag fills (`deeper`). A message already naming the flag is kept.
 */
function renamed(e: UsageError | RequestValidationError, flag: string, deeper = false): UsageError {
  const field = e.field;
  if (field === flag) return e instanceof UsageError ? e : new UsageError(e.message, { field, code: e.code });
  const rule =
    e instanceof RequestValidationError
      ? e.rule
      : field !== undefined && e.message.startsWith(`${field}: `)
        ? e.message.slice(field.length + 2)
        : e.message;
  const where = deeper && field !== undefined ? `${field}: ` : '';
  return new UsageError(`${flag}: ${where}${rule}`, { field: flag, code: e.code, hint: e.hint, cause: e });
}

/**
 * Parses commander's option values with the verb's schema. Values commander filled in from a default are left
 * out, so the schema's own default applies (commander's only decorates the help). A failure names the flag.
 */
export function parseFlags(
  spec: AnySpec,
  cmd: Pick<Command, 'opts' | 'getOptionValueSource'> & { parent?: Command | null },
): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cmd.opts())) {
    if (cmd.getOptionValueSource(k) !== 'default') raw[k] = v;
  }
  const parent = cmd.parent;
  for (const k of spec.inherit ?? []) {
    const v: unknown = parent?.opts()[k];
    if (raw[k] === undefined && v !== undefined && parent?.getOptionValueSource(k) !== 'default') raw[k] = v;
  }
  const schema = spec.flags ?? z.object({});
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const own =
    issue?.code === 'custom' ? (issue.params as { usageError?: unknown } | undefined)?.usageError : undefined;
  const key = typeof issue?.path[0] === 'string' ? issue.path[0] : '';
  const name = flagName(spec, key);
  // A check of the whole object (flags that cannot be combined) names its flags itself.
  if (own instanceof UsageError) throw key === '' ? own : renamed(own, name);
  throw new UsageError(`${name}: ${issue?.message ?? 'is invalid'}`, { field: name });
}

/** The help text after the options: the notes, then the examples (when there are any). */
function addNotesAndExamples(cmd: Command, notes?: string, examples?: readonly string[]): void {
  const after = [
    notes,
    examples !== undefined && examples.length > 0
      ? `Examples:\n${examples.map((e) => `  ${e}`).join('\n')}`
      : undefined,
  ].filter((s): s is string => s !== undefined);
  if (after.length > 0) cmd.addHelpText('after', `\n${after.join('\n\n')}`);
}

/** Builds the commander Command of a verb; its action parses the flags, then loads and runs the handler. */
export function verbCommand<F extends z.ZodObject, A extends unknown[]>(
  spec: VerbSpec<F, A>,
  rt: Runtime,
): Command {
  const cmd = new Command(spec.name).description(spec.description);
  for (const a of spec.aliases ?? []) cmd.alias(a);
  for (const a of spec.args ?? []) {
    const arg = new Argument(a.name, a.help);
    if (a.choices !== undefined) arg.choices(a.choices);
    cmd.addArgument(arg);
  }
  const any = spec as unknown as AnySpec;
  for (const [key, schema] of Object.entries(shapeOf(any))) {
    for (const o of optionsOf(key, schema)) cmd.addOption(o);
  }
  addNotesAndExamples(cmd, spec.notes, spec.examples);
  spec.configure?.(cmd);
  cmd.action(
    rt.action(async (ctx, ...args: unknown[]) => {
      ctx.command = cmd;
      const flags = parseFlags(any, cmd) as z.output<F>;
      const positional = args.slice(0, spec.args?.length ?? 0) as A;
      refuseBlank(spec.args ?? [], positional);
      const { default: run } = await spec.handler();
      try {
        return await run(ctx, flags, ...positional);
      } catch (e) {
        throw asFlagError(any, flags, e);
      }
    }),
  );
  declared.set(cmd, any);
  return cmd;
}

/** The long spelling of a flag (`--image`), as users type it in commands and scripts. */
function longFlag(meta: FlagMeta): string | undefined {
  return /--[a-z0-9-]+/i.exec(meta.flag)?.[0];
}

/** True when contract field `field` (indexes written `[]`) is `path` or lies beneath it. */
function beneath(field: string, path: string): boolean {
  return field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);
}

/**
 * A rule broken by a value a flag put in the request is reported under the flag as typed: a contract field the
 * flag fills (`messages[0].content[1].image_url.url: must be a public https URL` → `--image: must be a public
 * https URL`; deeper fields keep their path: `--dynamic-mask: dynamic_masks[0].trajectories: …`), or a field
 * named like the flag (`thinking` → `--thinking`). Only flags that were given count (a value from `--body` is not
 * the flag's). The `fills` of a verb's flags are the one mapping from contract fields to flags.
 */
function asFlagError(spec: AnySpec, flags: Record<string, unknown>, e: unknown): unknown {
  const given = e instanceof RequestValidationError || e instanceof UsageError ? e : undefined;
  const field = given?.field;
  if (given === undefined || field === undefined || field.startsWith('-')) return e;
  const general = field.replace(/\[\d+\]/g, '[]');
  for (const [key, schema] of Object.entries(shapeOf(spec))) {
    const meta = flagRegistry.get(schema);
    const name = meta !== undefined ? longFlag(meta) : undefined;
    const value = flags[key];
    if (name === undefined || value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    const path = [name.slice(2), ...(meta?.fills ?? [])].find((f) => beneath(general, f));
    if (path !== undefined) return renamed(given, name, general !== path);
  }
  return e;
}

/**
 * A required argument given as an empty or blank string (`gw video get "$id"` with `$id` unset) is a usage error
 * before anything is sent: an id spliced into a path would otherwise reach another route (`GET /v1/videos/`).
 */
function refuseBlank(specs: readonly ArgSpec[], values: readonly unknown[]): void {
  specs.forEach((a, i) => {
    if (!a.name.startsWith('<')) return;
    const v = values[i];
    const blank = Array.isArray(v)
      ? v.some((x) => String(x).trim() === '')
      : typeof v === 'string' && v.trim() === '';
    if (!blank) return;
    const field = a.name.replace(/^<|(\.\.\.)?>$/g, '');
    throw new UsageError(`${field}: must not be empty`, {
      field,
      hint: field.endsWith('id') ? 'is the shell variable holding it set?' : undefined,
    });
  });
}

/** A group of verbs (`gw video`, `gw beta task`): its own description and examples, then its verbs. */
export function groupCommand(
  name: string,
  description: string,
  children: ReadonlyArray<Command>,
  opts: { examples?: readonly string[]; notes?: string } = {},
): Command {
  const cmd = new Command(name).description(description);
  for (const c of children) cmd.addCommand(c);
  addNotesAndExamples(cmd, opts.notes, opts.examples);
  return cmd;
}
