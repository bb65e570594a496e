/**
 * Token redaction. A token is shown only as `sk-…last4` (CLI.md), and any known secret is masked in
 * every string that leaves the process (stdout, stderr, journal, --verbose lines), also when it arrives split
 * across the pieces of a stream (heldBack).
 */

/** The redacted form of a token: its prefix up to the first dash (if short) and its last four characters. */
export function redactToken(token: string): string {
  if (token.length === 0) return '';
  if (token.length <= 8) return '…';
  const dash = token.indexOf('-');
  const prefix = dash > 0 && dash <= 4 ? token.slice(0, dash + 1) : '';
  return `${prefix}…${token.slice(-4)}`;
}

/** Keeps the secrets known to this process and masks them in any text. */
export class Redactor {
  readonly #secrets = new Set<string>();
  /** The secrets, longest first (kept sorted on add: redact() runs on every streamed chunk). */
  #sorted: string[] = [];

  /**
   * Registers a secret (ignored when too short to be one), with the forms it takes once escaped: inside a JSON
   * string (a token holding `"` or `\\` echoed by a gateway and re-serialised by --json, once or twice) and
   * URL-encoded. Each form is masked like the secret itself.
   */
  add(secret: string | undefined): void {
    if (secret === undefined || secret.length < 6 || this.#secrets.has(secret)) return;
    const esc = (t: string): string => JSON.stringify(t).slice(1, -1);
    const mask = redactToken(secret);
    // Each form is replaced by the mask escaped the same way, so a JSON document stays valid JSON.
    const forms: Array<[string, string]> = [
      [secret, mask],
      [esc(secret), esc(mask)],
      [esc(esc(secret)), esc(esc(mask))],
      [encodeURIComponent(secret), encodeURIComponent(mask)],
    ];
    for (const [form, m] of forms) this.#put(form, m);
  }

  /** Registers one form of a secret with its mask. */
  #put(form: string, mask: string): void {
    if (this.#masks.has(form)) return;
    this.#secrets.add(form);
    this.#masks.set(form, mask);
    this.#sorted = [...this.#secrets].sort((a, b) => b.length - a.length);
    this.#latin1 = undefined;
  }

  /** The mask of each registered form (an escaped form is shown as its secret's mask). */
  readonly #masks = new Map<string, string>();

  #latin1: Redactor | undefined;

  /**
   * The same secrets over bytes read as latin1 (one character per byte: `Buffer#toString('latin1')`), for a
   * payload passed on byte for byte: each form and mask is its UTF-8 encoding read that way, so masking the text
   * and writing it back as latin1 changes nothing but the secrets, whatever else the bytes hold.
   */
  latin1(): Redactor {
    if (this.#latin1 === undefined) {
      const view = new Redactor();
      const asBytes = (t: string): string => Buffer.from(t, 'utf8').toString('latin1');
      for (const [form, mask] of this.#masks) view.#put(asBytes(form), asBytes(mask));
      this.#latin1 = view;
    }
    return this.#latin1;
  }

  /**
   * How many characters at the end of `text` could be the beginning of a secret (of any of its forms): text that
   * arrives in pieces (a stream's deltas) keeps them back until the next piece shows whether the secret follows, so
   * a token split across two pieces is masked like a whole one.
   */
  heldBack(text: string): number {
    let held = 0;
    for (const s of this.#sorted) {
      for (let k = Math.min(s.length - 1, text.length); k > held; k--) {
        if (text.endsWith(s.slice(0, k))) {
          held = k;
          break;
        }
      }
    }
    return held;
  }

  /** Replaces every registered secret in `text` by its redacted form. */
  redact(text: string): string {
    // Longest first, so a secret that contains another is masked whole. Repeated, because the masked form's
    // last four characters and the text after them can spell the secret again (`abcd…abcd` + `…abcd`).
    const secrets = this.#sorted;
    if (secrets.length === 0) return text;
    let out = text;
    for (let pass = 0; pass < 16; pass++) {
      let changed = false;
      for (const s of secrets) {
        if (out.includes(s)) {
          out = out.split(s).join(this.#masks.get(s) ?? redactToken(s));
          changed = true;
        }
      }
      if (!changed) return out;
    }
    // Pathological secrets (containing `…`): mask with a bare ellipsis, which strictly shortens the text.
    for (const s of secrets) while (out.includes(s)) out = out.split(s).join('…');
    return out;
  }
}
