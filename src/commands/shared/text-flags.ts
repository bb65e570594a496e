/** Flags shared by gw chat, responses and messages. */
import * as z from 'zod';
import { hasControlChars } from '../../ui/sanitize.js';
import { parsed } from '../../cli/flag-types.js';
import { flag } from '../../cli/verb.js';
import { UsageError } from '../../core/errors.js';

/** `-m, --model`, defaulting to the profile's `defaults.<kind>`. */
export const modelFlag = (kind: string): z.ZodOptional<z.ZodString> =>
  flag(z.string().optional(), {
    flag: '-m, --model <model>',
    help: `model name (see \`gw models\`; default: the profile's defaults.${kind})`,
  });

/** `--stream` / `--no-stream` (undefined: stream when stdout is a terminal). */
export const streamFlag = (): z.ZodOptional<z.ZodBoolean> =>
  flag(z.boolean().optional(), {
    flag: '--stream',
    help: 'stream the answer (default when stdout is a terminal)',
    negate: 'wait for the complete answer',
  });

/** `--usage`. */
export const usageFlag = (): z.ZodOptional<z.ZodBoolean> =>
  flag(z.boolean().optional(), { flag: '--usage', help: 'print token usage (and cache fields) to stderr' });

/** A value sent as an HTTP header: one line without control characters (a CR/LF would split the header). */
export const headerValue = (field: string): ReturnType<typeof parsed<string>> =>
  parsed((value) => {
    if (hasControlChars(value)) {
      throw new UsageError(
        `${field}: the value contains a line break or control character; give one line of text`,
        { field },
      );
    }
    return value;
  });
