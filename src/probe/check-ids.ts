/**
 * The ids of the checklist, apart from the checks themselves: `gw probe`'s flag schema checks `--only` and `--skip`
 * against them before the handler (and the checks' client code) loads. checks.ts orders its checks by these lists.
 */

/** Ids of common.md §4 rule 5's checks, in report order. */
export const BASE_CHECK_IDS = ['models', 'chat', 'chat-stream', 'responses', 'messages', 'video'] as const;

/** Ids added by `--extended` (contract checks that cost nothing), in report order. */
export const EXTENDED_CHECK_IDS = [
  'model-not-found',
  'invalid-duration',
  'invalid-resolution',
  'embeddings',
] as const;

/** Every check id, in report order. */
export const CHECK_IDS: readonly string[] = [...BASE_CHECK_IDS, ...EXTENDED_CHECK_IDS];

/** Why `id` names no check (`"vidoe" is not a check (one of: …)`), or undefined for a check's id. */
export function unknownCheck(id: string): string | undefined {
  return CHECK_IDS.includes(id) ? undefined : `"${id}" is not a check (one of: ${CHECK_IDS.join(', ')})`;
}
