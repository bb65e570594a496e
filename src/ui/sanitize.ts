/**
 * Text that came from elsewhere (a gateway's error message, code or model id) is printed with its terminal
 * control characters made visible, so a hostile or broken answer cannot move the cursor, retitle the window or
 * hide earlier output. `\n` and `\t` are kept; every other C0 character, DEL and the C1 range (which includes
 * the 8-bit CSI) become `\xNN`.
 */

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** True when `text` holds any control character (CR, LF and TAB included): unusable as a token or header. */
export function hasControlChars(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) return true;
  return false;
}

/** `text` with every control character except newline and tab shown as `\xNN`. */
export function neutralize(text: string): string {
  let out: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isControl(c) && c !== 0x0a && c !== 0x09) {
      out ??= text.slice(0, i);
      out += `\\x${c.toString(16).padStart(2, '0')}`;
    } else if (out !== undefined) out += text[i];
  }
  return out ?? text;
}
