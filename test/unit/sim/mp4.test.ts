import { describe, expect, it } from 'vitest';
import { makeMp4, parseMp4Boxes, type Mp4Box } from '../../../src/sim/mp4.js';

function find(boxes: Mp4Box[], path: string[]): Mp4Box {
  let level = boxes;
  let found: Mp4Box | undefined;
  for (const type of path) {
    found = level.find((b) => b.type === type);
    if (!found) throw new Error(`no ${type} in ${path.join('/')}`);
    level = found.children ?? [];
  }
  return found as Mp4Box;
}

describe('makeMp4', () => {
  it('is a well-formed ISO-BMFF tree: ftyp, moov (mvhd, trak…), mdat', () => {
    const buf = makeMp4({ seconds: 5, width: 1280, height: 720 });
    const boxes = parseMp4Boxes(buf);
    expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov', 'mdat']);
    expect(buf.toString('latin1', 8, 12)).toBe('isom');
    const stbl = find(boxes, ['moov', 'trak', 'mdia', 'minf', 'stbl']);
    expect(stbl.children?.map((b) => b.type)).toEqual(['stsd', 'stts', 'stss', 'stsc', 'stsz', 'stco']);
    expect(find(boxes, ['moov', 'trak', 'mdia', 'hdlr'])).toBeDefined();
  });

  it('states the duration and size, and its sample table points at mdat', () => {
    const buf = makeMp4({ seconds: 7, width: 1920, height: 1080 });
    const boxes = parseMp4Boxes(buf);
    const mvhd = find(boxes, ['moov', 'mvhd']);
    const timescale = buf.readUInt32BE(mvhd.start + 20);
    const duration = buf.readUInt32BE(mvhd.start + 24);
    expect(duration / timescale).toBe(7);
    const tkhd = find(boxes, ['moov', 'trak', 'tkhd']);
    expect(buf.readUInt32BE(tkhd.start + 8 + 76) / 65536).toBe(1920);
    expect(buf.readUInt32BE(tkhd.start + 8 + 80) / 65536).toBe(1080);

    const stsz = find(boxes, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz']);
    const count = buf.readUInt32BE(stsz.start + 16);
    expect(count).toBe(7);
    let total = 0;
    for (let i = 0; i < count; i++) total += buf.readUInt32BE(stsz.start + 20 + 4 * i);
    const stco = find(boxes, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stco']);
    const offset = buf.readUInt32BE(stco.start + 16);
    const mdat = find(boxes, ['mdat']);
    expect(offset).toBe(mdat.start + 8);
    expect(total).toBe(mdat.size - 8);
    // The first sample is a length-prefixed NAL unit.
    expect(buf.readUInt32BE(offset) + 4).toBe(buf.readUInt32BE(stsz.start + 20));
  });

  it('carries an avc1 entry with an avcC holding an SPS and a PPS', () => {
    const buf = makeMp4();
    const stsd = find(parseMp4Boxes(buf), ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd']);
    expect(buf.toString('latin1', stsd.start + 20, stsd.start + 24)).toBe('avc1');
    const avcC = buf.indexOf('avcC', stsd.start, 'latin1');
    expect(avcC).toBeGreaterThan(0);
    const spsLen = buf.readUInt16BE(avcC + 10);
    expect(buf[avcC + 12]).toBe(0x67); // SPS NAL header
    expect(buf[avcC + 12 + spsLen + 3]).toBe(0x68); // PPS NAL header
  });

  it('is deterministic', () => {
    expect(makeMp4({ seconds: 3 }).equals(makeMp4({ seconds: 3 }))).toBe(true);
  });

  it('rejects a cut file', () => {
    const buf = makeMp4();
    expect(() => parseMp4Boxes(buf.subarray(0, buf.length - 3))).toThrow(/bad size/);
  });
});
