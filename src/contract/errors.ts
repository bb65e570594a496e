/**
 * Error codes the three documents name, with the handling they suggest (shown as `hint:`).
 * Pure data: the client attaches the hint to a GatewayError, the simulator answers with the codes.
 */

/** Documented hints by gateway error code. */
export const ERROR_HINTS: Readonly<Record<string, string>> = {
  // common.md §7
  model_not_found:
    'run `gw models` to see the models this token can use; a model may be invisible because of the token, the channel model configuration or the upstream account entitlement',
  invalid_duration:
    'fix the value: video seconds must be 2 to 15 (3 minimum for clip-1.x); beta duration 4 to 15 or -1',
  invalid_resolution: 'fix the value: video resolution must be 720p or 1080p',
  // beta-tasks-assets.md §7
  invalid_request:
    'the body is not valid JSON, a required field is missing, or callback_url is invalid (must be https and resolve to a public address)',
  moderation_skip_not_allowed: 'Moderation.Strategy=Skip is not offered by the asset library',
  InvalidAction: 'asset Update* and Delete* actions are not offered by the asset library',
  task_not_found: 'the task does not exist or belongs to another tenant; check the id and the token',
  'ResourceNotFound.Asset':
    'the asset does not exist or belongs to another tenant; check the id and the token',
  'ResourceNotFound.AssetGroup':
    'the asset group does not exist or belongs to another tenant; check the id and the token',
  'InvalidAction.RunningTaskDeletion':
    'a running task cannot be deleted; wait until it ends (`gw beta task wait <id>`), then delete it',
  service_error: 'the model service returned an abnormal result; retry later or report the request id',
  service_unavailable:
    'the account has not opened the overseas family or the asset library; ask the gateway administrator',
  // alpha-image2video.md §7 shows no error codes; the upstream family's business codes (wire-formats.md §5).
  '1000': 'authentication failed: check GW_TOKEN or run `gw login`',
  '1002': 'the token was refused: check GW_TOKEN or run `gw login`',
  '1102': 'the resource pack is exhausted; ask the gateway administrator',
  '1103': 'no permission for this model or resource; ask the gateway administrator',
  '1200': 'the request is invalid: check the body against `gw alpha i2v --help`',
  '1201': 'a parameter is invalid: check the field named in the message against `gw alpha i2v --help`',
  '1203': 'the model was not found or is not visible to this token: run `gw models`',
  '1301': 'the content was refused by the safety review; change the prompt or the image',
  '1302': 'rate limited: retry later',
  '1303': 'concurrency limit of the resource pack reached: retry later',
  model_mapping_required:
    'the filter-off model lacks an exact upstream version mapping; the gateway administrator must add one',
};

/** Hint for HTTP statuses when the code itself has none. */
export function hintForStatus(status: number): string | undefined {
  if (status === 401) return 'the token was refused: check GW_TOKEN or run `gw login`';
  if (status === 403)
    return 'the token may not use this resource: an upstream permission error means the model is not enabled or the quota is short; ask the administrator';
  if (status === 429) return 'rate limited: retry later';
  return undefined;
}

/** The documented hint for a code, falling back to one for its HTTP status. */
export function hintFor(code: string | undefined, status?: number): string | undefined {
  return (
    (code !== undefined ? ERROR_HINTS[code] : undefined) ??
    (status !== undefined ? hintForStatus(status) : undefined)
  );
}
