// Download: a 1 GiB video from gw sim over loopback, `gw video download` against `curl -o` (throughput and peak
// RSS), the peak RSS at 128 MiB against 1 GiB (flat: memory does not grow with the file), and the same download
// into the temp directory's disk (a reference row: there gw's fsync before the rename is part of the wait).
import { statSync, statfsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GW, cleanup, fmt, gwEnv, interleave, interleaveRaw, run, startSim, stats, tempDir } from './lib.mjs';

const GIB = 1024 ** 3;
const { fetch } = globalThis;
const SMALL = 128 * 1024 ** 2;
/** statfs type of tmpfs: the disk row says when the temp directory is in memory too. */
const TMPFS_MAGIC = 0x01021994;

/** Creates a video on the sim and waits (from this process) until it is completed. */
async function completedVideo(sim) {
  const headers = { authorization: `Bearer ${sim.token}`, 'content-type': 'application/json' };
  const res = await fetch(`${sim.baseUrl}/v1/videos`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'vid-2.7-t2v', prompt: 'bench', seconds: 2 }),
  });
  if (!res.ok) throw new Error(`POST /v1/videos: ${res.status} ${await res.text()}`);
  const { video_id: id } = await res.json();
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${sim.baseUrl}/v1/videos/${id}`, { headers });
    const v = await r.json();
    if (v.status === 'completed' || v.status === 'success') return id;
    await sleep(20);
  }
  throw new Error(`video ${id} did not complete`);
}

function remove(path) {
  try {
    unlinkSync(path);
  } catch {
    // not there
  }
}

/** One download by each tool: wall ms and peak RSS MB; the file is checked and removed. */
function measure(sim, id, dir, size) {
  const out = join(dir, 'video.mp4');
  const check = (r, what) => {
    if (r.code !== 0) throw new Error(`${what} exited ${r.code}: ${r.stderr.slice(0, 300)}`);
    const got = statSync(out).size;
    if (got !== size) throw new Error(`${what} wrote ${got} bytes, expected ${size}`);
    remove(out);
    return r;
  };
  const env = gwEnv(dir, { GW_BASE_URL: sim.baseUrl, GW_TOKEN: sim.token });
  const samples = { curl: [], gw: [] };
  return {
    samples,
    curl: async () => {
      remove(out);
      const r = check(
        await run(
          'curl',
          [
            '-sS',
            '-L',
            '--fail',
            '-H',
            `authorization: Bearer ${sim.token}`,
            '-o',
            out,
            `${sim.baseUrl}/v1/videos/${id}/content`,
          ],
          { rss: true },
        ),
        'curl',
      );
      samples.curl.push(r.rssMb);
      return r.ms;
    },
    gw: async () => {
      remove(out);
      const r = check(
        await run(process.execPath, [GW, 'video', 'download', id, '-o', out, '--force'], { env, rss: true }),
        'gw',
      );
      samples.gw.push(r.rssMb);
      return r.ms;
    },
    /** The same with --sha256 (hashing every byte on the way): a reference row, not a target. */
    gwSha: async () => {
      remove(out);
      const r = check(
        await run(process.execPath, [GW, 'video', 'download', id, '-o', out, '--force', '--sha256'], {
          env,
          rss: true,
        }),
        'gw --sha256',
      );
      return r.ms;
    },
  };
}

/**
 * The same download into the temp directory's file system (a disk, usually): gw fsyncs the file before its atomic
 * rename, curl does not, so the disk's write-back is in gw's time. A reference row: what a user saving to disk sees.
 */
async function toDisk(sim, id) {
  const dir = tempDir('download-disk');
  try {
    const onDisk = statfsSync(dir).type !== TMPFS_MAGIC;
    const m = measure(sim, id, dir, GIB);
    const [curl, gwDl] = await interleaveRaw([m.curl, m.gw], 3, 1);
    const ratios = stats(gwDl.map((ms, k) => curl[k] / ms));
    const s = (xs) => stats(xs.map((ms) => ms / 1000));
    return {
      figure: `download: 1 GiB into ${onDisk ? 'a disk' : 'tmpfs'} (${dir.slice(0, dir.lastIndexOf('/'))}), gw vs curl (reference)`,
      gw: fmt(s(gwDl), 's', 2),
      baseline: `curl -o: ${fmt(s(curl), 's', 2)}`,
      ratio: `${ratios.median.toFixed(2)}× [${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}]`,
      target: '(reference: includes the fsync)',
      ok: true,
      raw: { gw: stats(gwDl), baseline: stats(curl), ratios },
    };
  } finally {
    cleanup(dir);
  }
}

/** The download figures. */
export async function download() {
  // Files go to tmpfs when there is room: the figure is gw against curl, not the disk's write-back limits.
  const dir = tempDir('download', { inMemory: true, needBytes: 2.5 * GIB });
  const rows = [];
  try {
    let smallRss;
    const small = await startSim(
      { videoBytes: SMALL, timings: { videoQueuedMs: 0, videoRunningMs: 10 } },
      'dl-small',
    );
    try {
      const id = await completedVideo(small);
      const m = measure(small, id, dir, SMALL);
      await interleave([m.gw], 3, 1);
      smallRss = stats(m.samples.gw.slice(1));
    } finally {
      await small.stop();
    }

    const big = await startSim(
      { videoBytes: GIB, timings: { videoQueuedMs: 0, videoRunningMs: 10 } },
      'dl-big',
    );
    try {
      const id = await completedVideo(big);
      const m = measure(big, id, dir, GIB);
      const [curl, gwDl, gwSha] = await interleave([m.curl, m.gw, m.gwSha], 5, 1);
      const mibs = (ms) => GIB / 1024 ** 2 / (ms / 1000);
      const ratio = curl.median / gwDl.median;
      const rate = (s) => ({ median: mibs(s.median), min: mibs(s.max), max: mibs(s.min) });
      rows.push({
        figure: 'download: 1 GiB, gw video download (throughput)',
        gw: fmt(rate(gwDl), 'MiB/s', 0),
        baseline: `curl -o: ${fmt(rate(curl), 'MiB/s', 0)}`,
        ratio: `${ratio.toFixed(2)}×`,
        target: '≥ 0.5×',
        ok: ratio >= 0.5,
        raw: { gw: gwDl, baseline: curl, ratio },
      });
      const shaRatio = curl.median / gwSha.median;
      rows.push({
        figure: 'download: 1 GiB, gw video download --sha256 (reference)',
        gw: fmt(rate(gwSha), 'MiB/s', 0),
        baseline: `curl -o: ${fmt(rate(curl), 'MiB/s', 0)}`,
        ratio: `${shaRatio.toFixed(2)}×`,
        target: '(reference: hashing is opt-in)',
        ok: true,
        raw: { gw: gwSha, baseline: curl, ratio: shaRatio },
      });
      rows.push(await toDisk(big, id));
      const bigRss = stats(m.samples.gw.slice(1));
      const curlRss = stats(m.samples.curl.slice(1));
      rows.push({
        figure: 'download: 1 GiB, gw peak RSS',
        gw: fmt(bigRss, 'MB', 0),
        baseline: `curl: ${fmt(curlRss, 'MB', 0)}`,
        ratio: `${bigRss.max.toFixed(0)} MB`,
        target: '≤ 150 MB',
        ok: bigRss.max <= 150,
        raw: { gw: bigRss, baseline: curlRss },
      });
      const growth = bigRss.median - smallRss.median;
      rows.push({
        figure: 'download: gw peak RSS, 1 GiB vs 128 MiB',
        gw: `1 GiB: ${fmt(bigRss, 'MB', 0)}`,
        baseline: `128 MiB: ${fmt(smallRss, 'MB', 0)}`,
        ratio: `${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB`,
        target: 'flat (± 10 MB)',
        ok: Math.abs(growth) <= 10,
        raw: { big: bigRss, small: smallRss },
      });
    } finally {
      await big.stop();
    }
  } finally {
    cleanup(dir);
  }
  return rows;
}
