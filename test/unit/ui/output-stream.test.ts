import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../../../src/ui/output.js';
import { Redactor } from '../../../src/ui/redact.js';

function setup(): { out: Output; writes: string[]; log: string[] } {
  const writes: string[] = [];
  const log: string[] = [];
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.write = ((chunk: string) => {
    writes.push(chunk);
    log.push(`out:${chunk}`);
    return true;
  }) as typeof stdout.write;
  stderr.write = ((chunk: string) => {
    log.push(`err:${chunk}`);
    return true;
  }) as typeof stderr.write;
  const redactor = new Redactor();
  redactor.add('sk-secret-token-1234');
  const out = new Output(
    { stdout, stderr, stdin: new PassThrough(), env: {} },
    { json: false, quiet: false, verbose: true, color: false },
    redactor,
  );
  return { out, writes, log };
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
