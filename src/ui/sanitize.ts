/**
 * Text that came from elsewhere (a gateway's error message, code or model id) is printed with its terminal
 * control characters made visible, so a hostile or broken answer cannot move the cursor, retitle the window or
 * hide earlier output. `\n` and `\t` are kept; every other C0 character, DEL and the C1 range (which includes
 * the 8-bit CSI) become `\xNN` in human text and `\u00NN` in JSON text. ui/output.ts applies it to every line
 * it writes.
 */

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** True when `text` holds any control character (CR, LF and TAB included): unusable as a token or header. */
export function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) return true;
  return false;
}

/** Any control character but newline and tab (isControl): a regular expression finds none ten times faster. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const ESCAPED = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** `text` with every control character except newline and tab replaced by `escape(code)`. */
function escapeControls(text: string, escape: (code: number) => string): string {
  if (!ESCAPED.test(text)) return text;
  let out: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isControl(c) && c !== 0x0a && c !== 0x09) {
      out ??= text.slice(0, i);
      out += escape(c);
    } else if (out !== undefined) out += text[i];
  }
  return out ?? text;
}

/** `text` with every control character except newline and tab shown as `\xNN`. */
export function neutralize(text: string): string {
  return escapeControls(text, (c) => `\\x${c.toString(16).padStart(2, '0')}`);
}

/**
 * JSON text with every control character except newline and tab written as a `\u00NN` escape. In JSON such a
 * character can only stand inside a string, where the escape is the same value: the document parses to what it
 * was. JSON.stringify escapes C0 itself but leaves DEL and C1 (the 8-bit CSI) raw; a gateway's own event data may
 * hold anything.
 */
export function jsonSafe(text: string): string {
  return escapeControls(text, (c) => `\\u${c.toString(16).padStart(4, '0')}`);
}
