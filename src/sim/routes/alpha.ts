/**
 * alpha-image2video.md in the simulator: `POST /alpha/v1/videos/image2video`, JSON or multipart/form-data (§2.1),
 * every rule of §2.1, §4 rules 1–4 and §8 checked server-side. The document shows no error codes (§7), so errors
 * mirror the upstream's business codes (wire-formats.md §5): 400/1200 invalid request, 400/1201 invalid
 * parameter, 404/1203 model not found; 401/1002 is answered by the core. §4 rule 5 (mask resolution) makes the
 * upstream task fail later, not the creation: a mismatch is accepted, as the gateway would.
 */
import { ALPHA_MODELS } from '../../contract/catalog.js';
import { ALPHA_IMAGE2VIDEO_PATH, alphaImage2VideoBodySchema, effectiveModel } from '../../contract/alpha.js';
import { check } from '../../contract/validate.js';
import type { SimReply, SimRequest } from '../http.js';
import type { Sim } from '../server.js';

/** A created task as the simulator keeps it (task records beyond creation: not shown, §2.2 / §3). */
export interface AlphaSimTask {
  task_id: string;
  task_status: 'submitted';
  created_at: number;
  updated_at: number;
  model_name: string;
  external_task_id: string | undefined;
  request_id: string;
  /** How the body arrived. */
  encoding: 'json' | 'multipart';
}

/** Tasks per tenant, then per task id. */
export type AlphaStore = Map<string, Map<string, AlphaSimTask>>;

/** The simulator's alpha tasks (tests read it). */
export function alphaStore(sim: Sim): AlphaStore {
  return sim.store<AlphaStore>('alpha', () => new Map());
}

// Fields whose values are objects or arrays in the JSON form; a multipart form carries them JSON-encoded.
const STRUCTURED = new Set(['voice_list', 'dynamic_masks', 'camera_control', 'watermark_info']);

class BadRequest extends Error {
  constructor(
    readonly code: '1200' | '1201',
    message: string,
  ) {
    super(message);
  }
}

/** Turns multipart fields back into the JSON body of §2.1; a file part becomes Base64 of its bytes. */
async function fromMultipart(req: SimRequest, contentType: string): Promise<Record<string, unknown>> {
  let form: FormData;
  try {
    form = await new Request('http://sim', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: req.rawBody,
    }).formData();
  } catch {
    throw new BadRequest('1200', 'body is not valid multipart/form-data');
  }
  const body: Record<string, unknown> = {};
  for (const [key, entry] of form.entries()) {
    const value: string | File = entry;
    if (typeof value !== 'string') {
      body[key] = Buffer.from(await value.arrayBuffer()).toString('base64');
      continue;
    }
    if (STRUCTURED.has(key) || /^[[{]/.test(value)) {
      try {
        body[key] = JSON.parse(value) as unknown;
      } catch {
        if (STRUCTURED.has(key)) {
          throw new BadRequest('1201', `${key}: must be JSON in a multipart field`);
        }
        body[key] = value;
      }
    } else if (key === 'cfg_scale' && value.trim() !== '' && Number.isFinite(Number(value))) {
      body[key] = Number(value); // a form field is text; §2.1 types cfg_scale as a number
    } else {
      body[key] = value;
    }
  }
  return body;
}

async function readBody(req: SimRequest): Promise<{ body: unknown; encoding: 'json' | 'multipart' }> {
  const contentType = req.headers['content-type'] ?? '';
  if (/^multipart\/form-data/i.test(contentType)) {
    return { body: await fromMultipart(req, contentType), encoding: 'multipart' };
  }
  if (req.rawBody.length === 0) throw new BadRequest('1200', 'request body is required');
  if (!/json/i.test(contentType)) {
    throw new BadRequest(
      '1200',
      `unsupported content type "${contentType}": send application/json or multipart/form-data`,
    );
  }
  return { body: req.body, encoding: 'json' };
}

async function create(sim: Sim, req: SimRequest, reply: SimReply): Promise<void> {
  let parsed: { body: unknown; encoding: 'json' | 'multipart' };
  try {
    parsed = await readBody(req);
  } catch (e) {
    if (e instanceof BadRequest) return reply.error(400, e.code, e.message, 'alpha');
    throw e;
  }
  const { body, encoding } = parsed;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return reply.error(400, '1200', 'the body must be a JSON object', 'alpha');
  }
  const fields = body as Record<string, unknown>;
  // A model this token cannot use, or one the family does not have, is "not found" (upstream 404/1203).
  if (fields.model_name === undefined || typeof fields.model_name === 'string') {
    const model = effectiveModel(fields);
    if (!(ALPHA_MODELS as readonly string[]).includes(model) || !req.canSee(model)) {
      return reply.error(
        404,
        '1203',
        `model_name: model ${model} not found or not available to this token`,
        'alpha',
      );
    }
  }
  const r = check(alphaImage2VideoBodySchema, fields);
  if (!r.ok) return reply.error(400, '1201', `${r.violation.field}: ${r.violation.message}`, 'alpha');
  const v = r.value;
  const now = sim.now();
  const task: AlphaSimTask = {
    task_id: sim.id(''),
    task_status: 'submitted',
    created_at: now,
    updated_at: now,
    model_name: effectiveModel(v),
    external_task_id: v.external_task_id,
    request_id: req.requestId,
    encoding,
  };
  const store = alphaStore(sim);
  const tenant = store.get(req.tenant) ?? new Map<string, AlphaSimTask>();
  store.set(req.tenant, tenant);
  tenant.set(task.task_id, task);
  reply.json(200, {
    code: 0,
    message: 'success',
    request_id: req.requestId,
    data: {
      task_id: task.task_id,
      // wire-formats.md §5: the upstream echoes the caller's id here
      task_info: task.external_task_id !== undefined ? { external_task_id: task.external_task_id } : {},
      task_status: task.task_status,
      created_at: task.created_at,
      updated_at: task.updated_at,
    },
  });
}

/** alpha-image2video.md §4: registers `POST /alpha/v1/videos/image2video`. */
export function registerAlphaRoutes(sim: Sim): void {
  sim.router.add('POST', ALPHA_IMAGE2VIDEO_PATH, (req, reply) => create(sim, req, reply), { shape: 'alpha' });
}
