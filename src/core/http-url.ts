import { UsageError } from './errors.js';

/**
 * An absolute http(s) URL given by the user (a flag, an environment variable): the text itself, or a UsageError
 * naming `field` and the rule (exit 2, before anything is sent).
 */
export function parseHttpUrl(text: string, field: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`${field}: "${text}" is not a URL`, { field });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UsageError(`${field}: "${text}" must be an http(s) URL`, { field });
  }
  return text;
}
