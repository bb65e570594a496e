import {
  closeSync,
  createReadStream,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** What kind of thing a journal entry records. */
export type JournalKind = 'video' | 'alpha' | 'beta-task' | 'beta-asset';

/** One created task or asset, as gw remembers it. Never holds the token. */
export interface JournalEntry {
  kind: JournalKind;
  id: string;
  model?: string | undefined;
  createdAt: string;
  requestId?: string | undefined;
  profile?: string | undefined;
  baseUrl?: string | undefined;
  state?: string | undefined;
  updatedAt?: string | undefined;
  /** Extra facts (group id for assets, output file…). */
  extra?: Record<string, unknown> | undefined;
}

type Line =
  | ({ op: 'create' } & JournalEntry)
  | {
      op: 'update';
      kind: JournalKind;
      id: string;
      state: string;
      at: string;
      extra?: Record<string, unknown>;
    };

/** Where a journal reports what it cannot do (a CLI warns; a library may stay silent). */
export interface JournalHooks {
  /** A state update could not be written (it is then not thrown). */
  onWriteError?: (e: unknown) => void;
  /** Line `n` (1-based) is valid JSON but not a journal entry. */
  onBadLine?: (n: number) => void;
}

function isLine(v: unknown): v is Line {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return (o.op === 'create' || o.op === 'update') && typeof o.kind === 'string' && typeof o.id === 'string';
}

/**
 * An append-only JSON-lines journal of every task and asset this machine created. Each line is written and
 * fsynced before the caller prints the id, so a crash right after creation never loses it. A damaged line
 * (a crash mid-write) is skipped when reading.
 */
export class Journal {
  readonly path: string;

  constructor(
    dir: string,
    private readonly hooks: JournalHooks = {},
  ) {
    this.path = join(dir, 'journal.jsonl');
    this.dir = dir;
  }

  private readonly dir: string;

  /** Records a created task or asset (durably, before returning); throws when the journal cannot be written. */
  record(entry: Omit<JournalEntry, 'createdAt'> & { createdAt?: string }): void {
    this.#append({ op: 'create', createdAt: new Date().toISOString(), ...entry });
  }

  /**
   * Records the last known state of a task or asset. With an `onWriteError` hook a failure is reported there
   * instead of thrown: a state update is a convenience, never worth failing the command it decorates.
   */
  update(kind: JournalKind, id: string, state: string, extra?: Record<string, unknown>): void {
    if (this.hooks.onWriteError !== undefined) {
      try {
        this.#update(kind, id, state, extra);
      } catch (e) {
        this.hooks.onWriteError(e);
      }
    } else this.#update(kind, id, state, extra);
  }

  #update(kind: JournalKind, id: string, state: string, extra?: Record<string, unknown>): void {
    this.#append({
      op: 'update',
      kind,
      id,
      state,
      at: new Date().toISOString(),
      ...(extra ? { extra } : {}),
    });
  }

  /** All entries, oldest first, with updates folded in. */
  list(): JournalEntry[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return [];
    }
    const byKey = new Map<string, JournalEntry>();
    let n = 0;
    for (const raw of text.split('\n')) {
      n++;
      if (raw.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        continue; // a line cut by a crash
      }
      // Valid JSON that is not an entry (a number, null, an array, an object without kind and id): skipped.
      if (!isLine(parsed)) {
        this.hooks.onBadLine?.(n);
        continue;
      }
      const line = parsed;
      const key = `${line.kind}:${line.id}`;
      if (line.op === 'create') {
        const { op: _op, ...entry } = line;
        byKey.set(key, { ...byKey.get(key), ...entry });
      } else if (line.op === 'update') {
        const e = byKey.get(key);
        if (e) {
          e.state = line.state;
          e.updatedAt = line.at;
          if (line.extra) e.extra = { ...e.extra, ...line.extra };
        }
      }
    }
    return [...byKey.values()];
  }

  /**
   * The tasks a batch in `batch` (its absolute directory) journaled for these items (custom_id → the time of
   * its send record): a create is matched by all three, so an older create of a retried item never is. Read as a
   * stream (the journal keeps every create of the machine).
   */
  async findBatchCreates(
    batch: string,
    sends: ReadonlyMap<string, number>,
  ): Promise<
    Map<string, { id: string; kind: 'video' | 'alpha' | 'beta-task'; requestId?: string | undefined }>
  > {
    const out = new Map<string, { id: string; kind: 'video' | 'alpha' | 'beta-task'; requestId?: string }>();
    let input;
    try {
      input = createReadStream(this.path);
      await once(input, 'open');
    } catch {
      return out;
    }
    for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
      // Most lines are of other batches and commands: a look at the text before the parse.
      if (!raw.includes('"send_at"')) continue;
      let v: unknown;
      try {
        v = JSON.parse(raw);
      } catch {
        continue;
      }
      if (!isLine(v) || v.op !== 'create' || v.kind === 'beta-asset') continue;
      const x = v.extra ?? {};
      const id = typeof x.custom_id === 'string' ? x.custom_id : undefined;
      if (x.batch !== batch || id === undefined || sends.get(id) !== x.send_at) continue;
      out.set(id, {
        id: v.id,
        kind: v.kind,
        ...(v.requestId !== undefined ? { requestId: v.requestId } : {}),
      });
    }
    return out;
  }

  #append(line: Line): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fd = openSync(this.path, 'a+', 0o600);
    try {
      // Start on a fresh line even if a previous writer crashed mid-line.
      const size = fstatSync(fd).size;
      let lead = '';
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) lead = '\n';
      }
      writeSync(fd, `${lead}${JSON.stringify(line)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}
