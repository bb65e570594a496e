/**
 * Pure helpers of `gw alpha i2v`: the warnings gw gives where the upstream may fail a task the gateway accepts, and the abbreviated body of
 * `--dry-run`.
 */
import { sniffImageType } from '../../contract/image-size.js';
import { base64ImageInfo, isBase64, readableMasks } from '../../contract/alpha.js';

/** Upstream camera types and `simple` config keys (wire-formats.md §5; the gateway document shows only `simple`). */
export const UPSTREAM_CAMERA_TYPES = [
  'simple',
  'down_back',
  'forward_up',
  'right_turn_forward',
  'left_turn_forward',
] as const;
export const UPSTREAM_CAMERA_KEYS = ['horizontal', 'vertical', 'pan', 'tilt', 'roll', 'zoom'] as const;

function cameraWarnings(camera: unknown): string[] {
  if (camera === null || typeof camera !== 'object') return [];
  const { type, config } = camera as { type?: unknown; config?: unknown };
  if (typeof type !== 'string') return [];
  const out: string[] = [];
  const note = '(the gateway documents only `simple`: the upstream may fail the task)';
  if (!(UPSTREAM_CAMERA_TYPES as readonly string[]).includes(type)) {
    out.push(
      `camera_control.type "${type}" is not one the upstream lists (${UPSTREAM_CAMERA_TYPES.join(', ')}) ${note}`,
    );
    return out;
  }
  const entries = config !== null && typeof config === 'object' ? Object.entries(config) : undefined;
  if (type !== 'simple') {
    if (entries !== undefined) out.push(`camera_control.type "${type}" takes no config upstream ${note}`);
    return out;
  }
  if (entries === undefined) {
    out.push(`camera_control.type "simple" needs a config with one non-zero key upstream ${note}`);
    return out;
  }
  const unknown = entries.filter(([k]) => !(UPSTREAM_CAMERA_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    out.push(
      `camera_control.config key(s) ${unknown.map(([k]) => k).join(', ')} unknown upstream (${UPSTREAM_CAMERA_KEYS.join(', ')}) ${note}`,
    );
  }
  if (entries.some(([, v]) => typeof v === 'number' && (v < -10 || v > 10))) {
    out.push(`camera_control.config values must be within -10..10 upstream ${note}`);
  }
  if (entries.filter(([, v]) => v !== 0).length !== 1) {
    out.push(`camera_control.config must have exactly one non-zero key upstream ${note}`);
  }
  return out;
}

/**
 * What may make the upstream fail a task the gateway accepts: an unverifiable mask resolution (alpha §4 rule 5),
 * image limits and camera rules of the upstream (wire-formats.md §5), trajectory points outside the image.
 */
export function alphaWarnings(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  const image = typeof body.image === 'string' ? base64ImageInfo(body.image) : undefined;
  const maskFields = [
    ...(body.static_mask !== undefined ? ['static_mask'] : []),
    ...(Array.isArray(body.dynamic_masks)
      ? body.dynamic_masks.map((_, i) => `dynamic_masks[${i}].mask`)
      : []),
  ];
  if (maskFields.length > 0 && (image === undefined || readableMasks(body).length < maskFields.length)) {
    out.push(
      `mask resolution not checked (the image or a mask is not a local PNG/JPEG): a mask whose resolution differs from the image's may make the upstream fail`,
    );
  }
  for (const field of ['image', 'image_tail'] as const) {
    const v = body[field];
    if (typeof v !== 'string' || !isBase64(v)) continue;
    const info = base64ImageInfo(v);
    const bytes = Math.floor((v.length * 3) / 4);
    const limits = '(jpg/png, at most 10 MB, sides of 300 px or more, aspect 1:2.5 to 2.5:1)';
    if (bytes > 10 * 1024 * 1024) out.push(`${field} is larger than 10 MB ${limits}`);
    if (info && Math.min(info.width, info.height) < 300) {
      out.push(`${field} is ${info.width}x${info.height}, under 300 px ${limits}`);
    }
    if (info && (info.width / info.height > 2.5 || info.height / info.width > 2.5)) {
      out.push(`${field} is ${info.width}x${info.height}, outside aspect 1:2.5..2.5:1 ${limits}`);
    }
  }
  if (image && Array.isArray(body.dynamic_masks)) {
    body.dynamic_masks.forEach((g: unknown, i) => {
      const t = (g as { trajectories?: unknown } | null)?.trajectories;
      if (!Array.isArray(t)) return;
      const outside = t.filter((p: unknown) => {
        const { x, y } = (p ?? {}) as { x?: unknown; y?: unknown };
        return typeof x === 'number' && typeof y === 'number' && (x >= image.width || y >= image.height);
      });
      if (outside.length > 0) {
        out.push(
          `dynamic_masks[${i}].trajectories: ${outside.length} point(s) outside the ${image.width}x${image.height} image (origin bottom-left)`,
        );
      }
    });
  }
  out.push(...cameraWarnings(body.camera_control));
  return out;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** `<base64 PNG 640x360, 12.3 KiB>` for a Base64 image; other strings unchanged. */
export function abbreviateBase64(value: string): string {
  if (!isBase64(value)) return value;
  const bytes = Math.floor((value.length * 3) / 4) - (value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0);
  const info = base64ImageInfo(value);
  if (info) return `<base64 ${info.type.toUpperCase()} ${info.width}x${info.height}, ${kib(bytes)}>`;
  const type = sniffImageType(Buffer.from(value.slice(0, 16), 'base64'));
  return `<base64${type ? ` ${type.toUpperCase()}` : ''}, ${kib(bytes)}>`;
}

const IMAGE_FIELDS = new Set(['image', 'image_tail', 'static_mask', 'mask']);

/** The body with every Base64 image (and any long Base64 string) abbreviated, for `--dry-run`. */
export function abbreviateBody(value: unknown, key?: string): unknown {
  if (typeof value === 'string') {
    return (key !== undefined && IMAGE_FIELDS.has(key)) || value.length >= 64
      ? abbreviateBase64(value)
      : value;
  }
  if (Array.isArray(value)) return value.map((v) => abbreviateBody(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, abbreviateBody(v, k)]));
  }
  return value;
}
