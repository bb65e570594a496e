import { describe, expect, it } from 'vitest';
import { imageSize, sniffImageType } from '../../../src/contract/image-size.js';
import { makeJpeg, makePng } from '../../helpers/images.js';

describe('imageSize', () => {
  it.each([
    [1, 1],
    [640, 360],
    [300, 750],
  ])('reads a %ix%i PNG from IHDR', (w, h) => {
    expect(imageSize(makePng(w, h))).toEqual({ type: 'png', width: w, height: h });
  });

  it.each([
    ['baseline SOF0', 0xc0],
    ['extended SOF1', 0xc1],
    ['progressive SOF2', 0xc2],
  ])('reads a JPEG with %s', (_name, sof) => {
    expect(imageSize(makeJpeg(1280, 720, { sof }))).toEqual({ type: 'jpeg', width: 1280, height: 720 });
  });

  it('skips fill bytes and APP segments full of 0xFF before the frame header', () => {
    expect(imageSize(makeJpeg(64, 48, { fill: true }))).toEqual({ type: 'jpeg', width: 64, height: 48 });
  });

  it('works on a subarray with a byte offset', () => {
    const png = makePng(10, 20);
    const padded = Buffer.concat([Buffer.alloc(7), png]);
    expect(imageSize(padded.subarray(7))).toEqual({ type: 'png', width: 10, height: 20 });
  });

  it('answers undefined for other types, empty and truncated input', () => {
    expect(imageSize(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'))).toBeUndefined();
    expect(imageSize(Buffer.alloc(0))).toBeUndefined();
    expect(imageSize(makePng(4, 4).subarray(0, 20))).toBeUndefined();
    const jpeg = makeJpeg(4, 4);
    expect(imageSize(jpeg.subarray(0, jpeg.length - 10))).toBeUndefined();
  });

  it('answers undefined for a JPEG whose scan starts before any frame header', () => {
    expect(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02]))).toBeUndefined();
  });

  it('answers undefined for a PNG whose first chunk is not IHDR', () => {
    const png = makePng(4, 4);
    png.write('IHDX', 12, 'latin1');
    expect(imageSize(png)).toBeUndefined();
  });
});

describe('sniffImageType', () => {
  it('knows PNG and JPEG magic numbers only', () => {
    expect(sniffImageType(makePng(2, 2))).toBe('png');
    expect(sniffImageType(makeJpeg(2, 2))).toBe('jpeg');
    expect(sniffImageType(Buffer.from('hello'))).toBeUndefined();
  });
});
