import { describe, expect, it } from 'vitest';
import { fillerByte } from '../../../src/sim/cdn.js';
import { useSim } from '../../helpers/sim.js';

describe('CDN generated content', () => {
  it('serves fillerByte(i) at every offset, whole and from a Range start that is not slice-aligned', async () => {
    const sim = await useSim();
    const size = 700_001;
    const url = sim.sim.cdn.publish({ size, contentType: 'video/mp4', expiresAt: Date.now() + 60_000 });
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(whole.length).toBe(size);
    const part = await fetch(url, { headers: { range: 'bytes=777-600000' } });
    expect(part.status).toBe(206);
    const tail = Buffer.from(await part.arrayBuffer());
    expect(tail.length).toBe(600_000 - 777 + 1);
    for (let i = 0; i < size; i++)
      if (whole[i] !== fillerByte(i)) expect([i, whole[i]]).toEqual([i, fillerByte(i)]);
    for (let i = 0; i < tail.length; i++) {
      if (tail[i] !== fillerByte(777 + i)) expect([i, tail[i]]).toEqual([i, fillerByte(777 + i)]);
    }
  });
});
