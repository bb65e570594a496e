import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../../../src/ui/output.js';
import { Redactor } from '../../../src/ui/redact.js';

function setup(tty = false): { out: Output; writes: string[]; bytes: () => Buffer; log: string[] } {
  const writes: string[] = [];
  const raw: Buffer[] = [];
  const log: string[] = [];
  const stdout = Object.assign(new PassThrough(), tty ? { isTTY: true } : {});
  const stderr = new PassThrough();
  stdout.write = ((chunk: string | Buffer) => {
    raw.push(Buffer.from(chunk));
    writes.push(chunk.toString());
    log.push(`out:${chunk.toString()}`);
    return true;
  }) as typeof stdout.write;
  stderr.write = ((chunk: string) => {
    log.push(`err:${chunk}`);
    return true;
  }) as typeof stderr.write;
  const redactor = new Redactor();
  redactor.add('sk-secret-token-1234');
  redactor.add('pässwört-geheim-1');
  const out = new Output(
    { stdout, stderr, stdin: new PassThrough(), env: {} },
    { json: false, quiet: false, verbose: true, color: false },
    redactor,
  );
  return { out, writes, bytes: () => Buffer.concat(raw), log };
}

describe('Output.stream', () => {
  it('coalesces the deltas of one turn of the event loop into one write', async () => {
    const { out, writes } = setup();
    for (let i = 0; i < 1000; i++) out.stream(`w${i} `);
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(writes[0]?.startsWith('w0 w1 ')).toBe(true);
    out.stream('next');
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([expect.any(String), 'next']);
  });

  it('keeps the order with every other output, and flush() writes what is pending', () => {
    const { out, log } = setup();
    out.stream('a');
    out.verbose('v');
    out.stream('b');
    out.line('c');
    out.stream('d');
    out.flush();
    out.flush();
    expect(log).toEqual(['out:a', 'err:v\n', 'out:b', 'out:c\n', 'out:d']);
  });

  it('masks a secret split across deltas', () => {
    const { out, writes } = setup();
    out.stream('token sk-secret-');
    out.stream('token-1234 end');
    out.flush();
    expect(writes.join('')).toBe('token sk-…1234 end');
  });
});

describe('Output.streamBytes', () => {
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  const b = (...parts: Array<string | number[]>): Buffer =>
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

  it('to a pipe: the bytes as sent, binary too, a secret masked even split across chunks', async () => {
    const { out, bytes } = setup();
    out.streamBytes(b([0xff, 0x00, 0x1b, 0x80, 0xc3], 'key sk-secret-'));
    await turn();
    out.streamBytes(b('token-1234', [0xfe, 0x9b], ' and pässw'));
    await turn();
    out.streamBytes(b('ört-geheim-1', [0xe2, 0x82]));
    out.endBytes();
    expect(bytes()).toEqual(
      b([0xff, 0x00, 0x1b, 0x80, 0xc3], 'key sk-…1234', [0xfe, 0x9b], ' and …im-1', [0xe2, 0x82]),
    );
  });

  it('to a terminal: UTF-8 text (a character split across chunks kept), controls as \\xNN, other bytes as U+FFFD', async () => {
    const { out, writes } = setup(true);
    out.streamBytes(b('caf', [0xc3]));
    await turn();
    out.streamBytes(b([0xa9], ' \x1b[2J', [0xff], ' sk-secret-token-1234 ', [0xe2, 0x82]));
    out.endBytes();
    expect(writes.join('')).toBe('café \\x1b[2J\uFFFD sk-…1234 \uFFFD');
  });

  it('keeps the order with text written before and after', () => {
    const { out, bytes } = setup();
    out.stream('text ');
    out.streamBytes(b([0xff]));
    out.line(' end');
    expect(bytes()).toEqual(b('text ', [0xff], ' end\n'));
  });
});
