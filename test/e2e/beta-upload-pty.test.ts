import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assetStore } from '../../src/sim/routes/beta-assets.js';
import { isolatedDirs } from '../helpers/gw.js';
import { spawnPty, stripAnsi } from '../helpers/pty.js';
import { useSim } from '../helpers/sim.js';

const ENTER = '\r';
const DOWN = '\x1b[B';
const CLEAR_LINE = '\x15'; // Ctrl-U

/** The `asset://…` lines the terminal showed (stdout and stderr share the terminal). */
function refsOn(screen: string): string[] {
  return [...stripAnsi(screen).matchAll(/^(asset:\/\/asset-\d{14}-\w+)\s*$/gm)].map((m) => m[1] as string);
}

describe('gw beta asset upload on a terminal', () => {
  it('creates a group, takes URLs with confirmed types and names, shows live status, prints the refs', async () => {
    const sim = await useSim();
    const dirs = isolatedDirs();
    const s = spawnPty(['beta', 'asset', 'upload'], { ...sim.env, ...dirs });

    await s.expect(/Asset group[\s\S]*Create a new group/);
    s.type(ENTER);
    await s.expect('New group name');
    s.type(`storyboard${ENTER}`);
    // (expect() skips everything shown before its match: wait for one text per answer, never two in a row)

    await s.expect('Asset URL (public https)');
    s.type(`http://example.com/cat.png${ENTER}`);
    await s.expect('must use https'); // refused with the reason
    s.type(CLEAR_LINE);
    s.type(`https://example.com/refs/cat.png${ENTER}`);
    await s.expect('Asset type of cat (guessed from the extension)');
    s.type(ENTER); // confirm the guess: Image
    await s.expect('Asset name');
    s.type(ENTER); // default: cat

    await s.expect('Asset URL (empty to finish)');
    s.type(`https://example.com/voice${ENTER}`);
    await s.expect('Asset type of voice');
    s.type(`${DOWN}${DOWN}${ENTER}`); // no guess: choose Audio
    await s.expect('Asset name');
    s.type(`${CLEAR_LINE}narration${ENTER}`);

    await s.expect('Asset URL (empty to finish)');
    s.type(ENTER);
    await s.expect(/asset\s+type\s+status/); // the live table on stderr
    expect(await s.exited).toBe(0);
    // Its last frame says how the wait ended, not that it still waits.
    const screen = stripAnsi(s.output());
    const lastFrame = screen.slice(screen.lastIndexOf('status  name'));
    expect(lastFrame).toMatch(/all 2 Active after [\d.]+m?s/);
    expect(lastFrame).not.toContain('waiting');

    expect(stripAnsi(s.output())).toMatch(/created asset group group-\d{14}-\w+ \(storyboard\)/);
    const refs = refsOn(s.output());
    expect(refs).toHaveLength(2);
    const assets = [...assetStore(sim.sim).assets.values()];
    expect(assets.map((a) => [a.AssetType, a.Name, a.URL])).toEqual([
      ['Image', 'cat', 'https://example.com/refs/cat.png'],
      ['Audio', 'narration', 'https://example.com/voice'],
    ]);
    expect(refs).toEqual(assets.map((a) => `asset://${a.Id}`));
    const groups = [...assetStore(sim.sim).groups.values()];
    expect(groups.map((g) => [g.Name, g.GroupType])).toEqual([['storyboard', 'AIGC']]);
    expect(assets.every((a) => a.GroupId === groups[0]?.Id)).toBe(true);

    // A second upload offers the group this machine created (from the journal).
    const again = spawnPty(['beta', 'asset', 'upload', '--url', 'https://example.com/b.jpg'], {
      ...sim.env,
      ...dirs,
    });
    await again.expect(`storyboard (${groups[0]?.Id})`);
    again.type(`${DOWN}${ENTER}`);
    await again.expect('Asset type of b (guessed from the extension)');
    again.type(ENTER);
    await again.expect('Asset name');
    again.type(ENTER);
    await again.expect('Asset URL (empty to finish)');
    again.type(ENTER);
    expect(await again.exited).toBe(0);
    expect(refsOn(again.output())).toHaveLength(1);
    expect(assetStore(sim.sim).assets.size).toBe(3);
    expect([...assetStore(sim.sim).assets.values()][2]?.GroupId).toBe(groups[0]?.Id);
  });

  it('Ctrl-C while watching leaves the created ids printed and journaled, with the resume command', async () => {
    const sim = await useSim({ timings: { assetProcessingMs: 600_000 } });
    const dirs = isolatedDirs();
    const s = spawnPty(['beta', 'asset', 'upload', '--url', 'https://example.com/a.png'], {
      ...sim.env,
      ...dirs,
    });
    await s.expect('Asset group');
    s.type(ENTER); // a new group
    await s.expect('New group name');
    s.type(ENTER);
    await s.expect('Asset type of a');
    s.type(ENTER);
    await s.expect('Asset name');
    s.type(ENTER);
    await s.expect('Asset URL (empty to finish)');
    s.type(ENTER);
    await s.expect(/Processing/);
    s.type('\x03');
    expect(await s.exited).toBe(130);
    const screen = stripAnsi(s.output());
    const [ref] = refsOn(screen);
    expect(ref).toBeDefined();
    const id = (ref as string).slice('asset://'.length);
    expect(screen).toContain(`gw beta asset wait ${id} -m gamma-video-2-0`);
    expect(readFileSync(join(dirs.GW_STATE_DIR, 'journal.jsonl'), 'utf8')).toContain(
      `"kind":"beta-asset","id":"${id}"`,
    );
  });

  it('Ctrl-C at a question exits 130 without creating anything', async () => {
    const sim = await useSim();
    const s = spawnPty(['beta', 'asset', 'upload'], { ...sim.env, ...isolatedDirs() });
    await s.expect('Asset group');
    s.type('\x03');
    expect(await s.exited).toBe(130);
    expect(sim.requests).toEqual([]);
  });
});
