/**
 * docs/architecture.md "Declaring a verb": every flag value is parsed by the verb's schema before its handler
 * module loads. Walks every verb of the registry and, for each flag with a type (a schema that refuses some text),
 * runs gw with a bad value: exit 2 naming the flag as typed, and the verb's handler never loaded.
 */
import type { Command } from 'commander';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type * as z from 'zod';
import { buildProgram } from '../../../src/cli/main.js';
import type { Runtime } from '../../../src/cli/context.js';
import { declared, flagRegistry, type AnySpec, type FlagMeta } from '../../../src/cli/verb.js';
import { runGw } from '../../helpers/gw.js';

/** Texts tried, in order, as a bad value: the first one a flag's schema refuses is used. */
const BAD = ['x', '-1', '0', '', '99999999999'];
/** Texts tried as a good value of a flag the verb cannot do without. */
const GOOD = ['chat-3.7-plus', '1', '10', '1s', 'x'];

interface Verb {
  path: string[];
  spec: AnySpec;
  /** Positional arguments that satisfy commander (a choice when there are choices). */
  args: string[];
  /** Values of the flags commander requires. */
  mandatory: string[];
}

/** What commander hands the schema for a flag given once with `text`. */
function raw(meta: FlagMeta, text: string): unknown {
  return meta.repeat === 'csv' ? text.split(',').filter(Boolean) : meta.repeat === 'collect' ? [text] : text;
}

function longFlag(meta: FlagMeta): string | undefined {
  return /--[a-z0-9-]+/i.exec(meta.flag)?.[0];
}

/** A flag that takes a value (not a switch). */
function takesValue(meta: FlagMeta): boolean {
  return /[<[]/.test(meta.flag);
}

/** Every verb of gw, its handler replaced by a spy (the definitions are module singletons main() reuses). */
async function verbs(): Promise<{ list: Verb[]; loads: Map<string, ReturnType<typeof vi.fn>> }> {
  const rt: Runtime = {
    io: { stdout: new PassThrough(), stderr: new PassThrough(), stdin: Readable.from([]), env: {} },
    action: () => async () => {},
  };
  const program = await buildProgram(['completion'], rt);
  const list: Verb[] = [];
  const loads = new Map<string, ReturnType<typeof vi.fn>>();
  const walk = (cmd: Command, path: string[]): void => {
    for (const sub of cmd.commands) {
      const p = [...path, sub.name()];
      walk(sub, p);
      const spec = declared.get(sub);
      if (spec === undefined) continue;
      const load = vi.fn(async () => ({ default: async () => 0 }));
      loads.set(p.join(' '), load);
      spec.handler = load;
      const args = (spec.args ?? []).filter((a) => a.name.startsWith('<')).map((a) => a.choices?.[0] ?? 'x');
      const mandatory: string[] = [];
      for (const schema of Object.values(spec.flags?.shape ?? {}) as z.ZodType[]) {
        const meta = flagRegistry.get(schema);
        if (meta === undefined || schema.safeParse(undefined).success) continue;
        const good = GOOD.find((t) => schema.safeParse(raw(meta, t)).success);
        if (good !== undefined) mandatory.push(longFlag(meta) as string, good);
      }
      list.push({ path: p, spec, args, mandatory });
    }
  };
  walk(program, []);
  return { list, loads };
}

const { list, loads } = await verbs();
const originals = new Map(list.map((v) => [v, v.spec.handler]));
afterAll(() => {
  for (const [v, h] of originals) v.spec.handler = h;
});

/** Each typed flag of each verb with a text its schema refuses. */
const cases = list.flatMap((v) =>
  Object.values(v.spec.flags?.shape ?? {}).flatMap((schema) => {
    const meta = flagRegistry.get(schema as z.ZodType);
    if (meta === undefined || !takesValue(meta)) return [];
    const name = longFlag(meta);
    const bad = BAD.find((t) => !(schema as z.ZodType).safeParse(raw(meta, t)).success);
    return name === undefined || bad === undefined ? [] : [{ verb: v, name, bad }];
  }),
);

describe('every verb parses its flags before its handler loads', () => {
  it('walks every verb and finds typed flags (the walk is not blind)', () => {
    expect(list.length).toBeGreaterThan(40);
    expect(cases.length).toBeGreaterThan(60);
  });

  it('every duration flag (`<dur>`, `<duration>`) is typed: its text is checked before the handler loads', () => {
    const untyped = list.flatMap((v) =>
      Object.values(v.spec.flags?.shape ?? {}).flatMap((schema) => {
        const meta = flagRegistry.get(schema as z.ZodType);
        if (meta === undefined || !/<(dur|duration)>/.test(meta.flag)) return [];
        return (schema as z.ZodType).safeParse(raw(meta, 'soon')).success
          ? [`${v.path.join(' ')} ${meta.flag}`]
          : [];
      }),
    );
    expect(untyped).toEqual([]);
  });

  it.each(cases.map((c) => [`${c.verb.path.join(' ')} ${c.name} ${JSON.stringify(c.bad)}`, c] as const))(
    '%s: exit 2 naming the flag, the handler never loaded',
    async (_label, c) => {
      const argv = [...c.verb.path, ...c.verb.args, ...c.verb.mandatory, `${c.name}=${c.bad}`];
      const r = await runGw(argv);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(c.name);
      expect(loads.get(c.verb.path.join(' '))).not.toHaveBeenCalled();
    },
  );
});
