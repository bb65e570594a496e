import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../../src/core/journal.js';
import { tempDir } from '../../helpers/tmp.js';

const dir = (): string => join(tempDir('gw-journal-'), 'state');

describe('Journal', () => {
  it('records entries and folds later state updates into them', () => {
    const j = new Journal(dir());
    j.record({
      kind: 'video',
      id: 'v1',
      model: 'clip-1.1-t2v',
      requestId: 'req-1',
      profile: 'default',
      baseUrl: 'http://gw',
    });
    j.record({ kind: 'beta-task', id: 't1', model: 'gamma-video-2-0' });
    j.update('video', 'v1', 'in_progress');
    j.update('video', 'v1', 'completed', { file: '/tmp/v1.mp4' });
    const list = j.list();
    expect(list.map((e) => [e.kind, e.id, e.state])).toEqual([
      ['video', 'v1', 'completed'],
      ['beta-task', 't1', undefined],
    ]);
    expect(list[0]).toMatchObject({
      requestId: 'req-1',
      profile: 'default',
      baseUrl: 'http://gw',
      extra: { file: '/tmp/v1.mp4' },
    });
    expect(list[0]?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('is private to the user (0600)', () => {
    const j = new Journal(dir());
    j.record({ kind: 'video', id: 'v1' });
    if (process.platform !== 'win32') expect(statSync(j.path).mode & 0o777).toBe(0o600);
  });

  it('still reads a journal whose last line was cut by a crash, and appends after it on a fresh line', () => {
    const j = new Journal(dir());
    j.record({ kind: 'video', id: 'v1' });
    j.record({ kind: 'video', id: 'v2' });
    // A crash in the middle of writing the third line.
    appendFileSync(j.path, '{"op":"create","kind":"video","id":"v3","createdAt":"2026-');
    expect(j.list().map((e) => e.id)).toEqual(['v1', 'v2']);
    j.record({ kind: 'video', id: 'v4' });
    expect(j.list().map((e) => e.id)).toEqual(['v1', 'v2', 'v4']);
    const lines = readFileSync(j.path, 'utf8').split('\n');
    expect(lines.filter((l) => l.includes('"v4"'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('"v4"'))?.startsWith('{')).toBe(true);
  });

  it('skips garbage lines and ignores updates for unknown ids', () => {
    const j = new Journal(dir());
    j.record({ kind: 'video', id: 'v1' });
    appendFileSync(j.path, 'not json\n\n');
    j.update('video', 'elsewhere', 'completed');
    expect(j.list().map((e) => e.id)).toEqual(['v1']);
  });

  it('reads nothing when there is no journal yet', () => {
    expect(new Journal(dir()).list()).toEqual([]);
  });

  it('a file holding only a cut line reads as empty', () => {
    const j = new Journal(dir());
    j.record({ kind: 'video', id: 'v1' });
    writeFileSync(j.path, '{"op":"create","kind":"vid');
    expect(j.list()).toEqual([]);
  });
});
