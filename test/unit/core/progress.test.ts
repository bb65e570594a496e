import { describe, expect, it } from 'vitest';
import { runGw } from '../../helpers/gw.js';
import { useSim } from '../../helpers/sim.js';

describe('progress on stderr', () => {
  it('draws a spinner on a terminal, never on stdout, and nothing with --json', async () => {
    const sim = await useSim();
    const create = await runGw(
      ['video', 'create', 'a fox', '-m', 'clip-1.1-t2v', '--seconds', '3', '--resolution', '720p'],
      { env: sim.env },
    );
    const id = create.stdout.trim();
    const tty = await runGw(['video', 'wait', id, '--interval', '10ms'], { env: sim.env, tty: true });
    expect(tty.exitCode).toBe(0);
    expect(tty.stderr).toContain(`⠋ ${id} waiting`);
    expect(tty.stderr).toMatch(new RegExp(`✔ ${id} (completed|success) after`));
    expect(tty.stdout).not.toContain('\u001b[');
    const json = await runGw(['video', 'wait', id, '--json'], { env: sim.env, tty: true });
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toMatchObject({ video_id: id });
  });
});
