/**
 * Token redaction. A token is shown only as `sk-…last4` (CLI.md), and any known secret is masked in
 * every string that leaves the process (stdout, stderr, journal, --verbose lines).
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

  /** Registers a secret (ignored when too short to be one). */
  add(secret: string | undefined): void {
    if (secret !== undefined && secret.length >= 6) this.#secrets.add(secret);
  }

  /** Replaces every registered secret in `text` by its redacted form. */
  redact(text: string): string {
    let out = text;
    for (const s of this.#secrets) {
      if (out.includes(s)) out = out.split(s).join(redactToken(s));
    }
    return out;
  }
}
