/**
 * The scripts and manifests of docs/distributed.md, as the Slurm tests run them and the docs test checks them: one
 * place, so the documentation holds only what the tests exercise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A fenced block of the document: its language, the file it names (`# file: <name>`), its text. */
export interface DocBlock {
  lang: string;
  file: string | undefined;
  text: string;
}

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'distributed.md');

/** Every fenced block of docs/distributed.md, in order. */
export function docBlocks(): DocBlock[] {
  const text = readFileSync(DOC, 'utf8');
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => {
    const body = m[2] as string;
    return { lang: m[1] as string, file: /^# file: (\S+)$/m.exec(body)?.[1], text: body };
  });
}

/** The block that names `file`. */
export function docFile(file: string): string {
  const b = docBlocks().find((x) => x.file === file);
  if (b === undefined) throw new Error(`docs/distributed.md has no block "# file: ${file}"`);
  return b.text;
}

/** The shell blocks that name no file (the commands a user types), in order. */
export function docCommands(lang = 'bash'): string[] {
  return docBlocks()
    .filter((b) => b.lang === lang && b.file === undefined)
    .map((b) => b.text);
}

/**
 * The sbatch submissions of the Slurm section as the Slurm tests make them (besides `--parsable`, which the test's
 * helper adds): the docs test checks the document shows exactly these, with its own values.
 */
export const SBATCH = {
  shards: (): string[] => ['shard.sbatch'],
  fanIn: (jobs: readonly string[]): string[] => [`--dependency=afterany:${jobs.join(':')}`, 'merge.sbatch'],
  again: (index: number | string): string[] => [`--array=${index}`, 'shard.sbatch'],
  load: (rate: number | string, duration: string, startAt: number | string): string[] => [
    `--export=ALL,RATE=${rate},DURATION=${duration},START_AT=${startAt}`,
    'load.sbatch',
  ],
  loadFanIn: (job: string): string[] => [
    `--dependency=afterany:${job}`,
    '--output=logs/load-merge-%j.out',
    '--wrap',
    'gw load merge load/run-*.json --out load/all.json',
  ],
};

/** An argv as a shell line (a word with a space or a `*` in single quotes). */
export function shellLine(argv: readonly string[]): string {
  return argv.map((w) => (/[\s*]/.test(w) ? `'${w}'` : w)).join(' ');
}

/**
 * The gw commands of a shell text: continuation lines joined, split at `&&`, `;` and line ends, quotes dropped,
 * and every variable or expression (`$X`, `${X}`, `$(X)`, `${{ … }}`) written `<v>` (a JSON array's closing `]`
 * after a command, as in a container override, is not part of it).
 */
export function gwCommands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, ' ')
    .split(/&&|;|\n/)
    .map((c) =>
      c
        .trim()
        .replace(/\$\{\{[^}]*\}\}/g, '<v>')
        .replace(/\$\(\(.*?\)\)|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([A-Za-z_]+\)/g, '<v>')
        .replace(/\\?["']/g, '')
        .replace(/\]+$/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((c) => /^gw\s/.test(c));
}

/** The rows of a `gw load --csv` file, by column name. */
export function csvRows(path: string): Array<Record<string, string>> {
  const [head, ...rows] = readFileSync(path, 'utf8').trim().split('\n');
  const names = (head ?? '').split(',');
  return rows.map(
    (r) => Object.fromEntries(r.split(',').map((v, i) => [names[i] ?? '', v])) as Record<string, string>,
  );
}

/**
 * How late a shard's first request reached the simulator (ms): its arrival stamp (`GET /sim/capacity?stamps=1`,
 * Unix ms of the simulator's clock, the machine's) against the instant it was due, `--start-at` plus its scheduled
 * start (`start_ms` of its --csv row, counted from the instant). Negative when it arrived early.
 */
export function firstRequestLateness(
  rows: ReadonlyArray<Record<string, string>>,
  startAt: number,
  arrived: ReadonlyMap<string, number>,
): number {
  const first = rows.reduce((a, b) => (Number(b.start_ms) < Number(a.start_ms) ? b : a));
  const at = arrived.get(first.request_id as string);
  if (at === undefined) throw new Error(`the simulator has no arrival stamp of ${first.request_id}`);
  return at - (startAt + Number(first.start_ms));
}
