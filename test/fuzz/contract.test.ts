import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as alpha from '../../src/contract/alpha.js';
import * as betaAssets from '../../src/contract/beta-assets.js';
import * as beta from '../../src/contract/beta.js';
import * as models from '../../src/contract/models.js';
import * as text from '../../src/contract/text.js';
import { RequestValidationError } from '../../src/client/errors.js';
import { requireValid } from '../../src/client/validation.js';
import { check } from '../../src/contract/validate.js';
import * as video from '../../src/contract/video.js';

const RUNS = { seed: 42, numRuns: 60 } as const;

/** Every zod schema the contract modules export, found by value so new schemas are fuzzed without edits here. */
const SCHEMAS: [string, z.ZodType][] = Object.entries<unknown>({
  ...alpha,
  ...betaAssets,
  ...beta,
  ...models,
  ...text,
  ...video,
}).filter((e): e is [string, z.ZodType] => e[1] instanceof z.ZodType);

const M = { model: 'gamma-video-2-0' };
const HTTPS = 'https://example.com/a.png';

/** A valid body per request schema: the starting points of the mutations. */
const VALID: Record<string, unknown> = {
  chatCreateParamsSchema: {
    model: 'chat-3.7-plus',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    stream: true,
  },
  responseCreateParamsSchema: {
    model: 'chat-3.7-plus',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
  },
  messageCreateParamsSchema: {
    model: 'chat-3.7-plus',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  },
  embeddingCreateParamsSchema: { model: 'embed-1', input: ['a', 'b'], encoding_format: 'float' },
  videoCreateSchema: { model: 'vid-2.7-t2v', prompt: 'a cat', seconds: 5, resolution: '720p' },
  betaTaskCreateSchema: {
    ...M,
    content: [
      { type: 'text', text: 'a cat surfing' },
      { type: 'image_url', image_url: { url: 'asset://asset-1' }, role: 'first_frame' },
    ],
    duration: 5,
    ratio: '16:9',
  },
  betaTaskListQuerySchema: { page_num: 1, page_size: 20, 'filter.status': 'running' },
  alphaImage2VideoRequestSchema: { image: HTTPS, prompt: 'a cat', mode: 'std', duration: '5' },
  alphaImage2VideoBodySchema: { image: HTTPS, model_name: 'alpha-v1-6', cfg_scale: 0.5 },
  createAssetGroupSchema: { ...M, Name: 'refs', GroupType: 'AIGC', Description: 'd' },
  createAssetSchema: { ...M, GroupId: 'group-1', URL: HTTPS, AssetType: 'Image', Name: 'cat' },
  getAssetSchema: { ...M, Id: 'asset-1' },
};

type Json = fc.JsonValue;

/** One edit of a JSON document: at the node chosen by `at` (pre-order index), replace, delete or add. */
interface Mutation {
  at: number;
  op: 'replace' | 'delete' | 'add' | 'retype';
  key: string;
  value: Json;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'delete', 'add', 'retype'),
  key: fc.oneof(
    fc.constantFrom('model', 'content', 'url', '__proto__', 'constructor', 'stream'),
    fc.string(),
  ),
  value: fc.jsonValue({ maxDepth: 3 }),
});

function retype(v: Json): Json {
  if (typeof v === 'string') return v.length > 0 && !Number.isNaN(Number(v)) ? Number(v) : [v];
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 1 : 'false';
  if (v === null) return {};
  if (Array.isArray(v)) return v.length > 0 ? (v[0] as Json) : null;
  return [v];
}

/** Applies one mutation to a deep copy. */
function mutate(doc: Json, m: Mutation): Json {
  const root = JSON.parse(JSON.stringify(doc)) as Json;
  type Container = Json[] | { [k: string]: Json };
  const containers: { parent: Container; key: string | number }[] = [];
  const walk = (v: Json): void => {
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        containers.push({ parent: v, key: i });
        walk(item);
      });
    } else if (v !== null && typeof v === 'object') {
      const o = v as { [k: string]: Json };
      for (const [k, item] of Object.entries(o)) {
        containers.push({ parent: o, key: k });
        walk(item);
      }
    }
  };
  walk(root);
  if (containers.length === 0) return m.value;
  const { parent, key } = containers[m.at % containers.length] as (typeof containers)[number];
  const arr = Array.isArray(parent) ? parent : undefined;
  const obj = arr === undefined ? (parent as { [k: string]: Json }) : undefined;
  const current = arr ? (arr[key as number] as Json) : (obj?.[key as string] as Json);
  switch (m.op) {
    case 'replace':
      if (arr) arr[key as number] = m.value;
      else if (obj) obj[key as string] = m.value;
      break;
    case 'retype':
      if (arr) arr[key as number] = retype(current);
      else if (obj) obj[key as string] = retype(current);
      break;
    case 'delete':
      if (arr) arr.splice(key as number, 1);
      else if (obj) delete obj[key as string];
      break;
    case 'add':
      if (arr) arr.push(m.value);
      else if (obj) Object.defineProperty(obj, m.key, { value: m.value, enumerable: true, writable: true });
      break;
  }
  return root;
}

/** The property: validation answers (success or issues), never throws; requireValid throws only RequestValidationError. */
function answersOnly(schema: z.ZodType, value: unknown): void {
  const r = schema.safeParse(value);
  expect(typeof r.success).toBe('boolean');
  const c = check(schema, value);
  if (!c.ok) {
    expect(typeof c.violation.field).toBe('string');
    expect(c.violation.message.length).toBeGreaterThan(0);
  }
  try {
    requireValid(schema, value);
  } catch (e) {
    expect(e).toBeInstanceOf(RequestValidationError);
  }
}

describe('fuzz: contract schemas', () => {
  it('finds the schemas and every seed body is valid', () => {
    expect(SCHEMAS.length).toBeGreaterThan(20);
    for (const [name, body] of Object.entries(VALID)) {
      const schema = SCHEMAS.find(([n]) => n === name)?.[1];
      expect(schema, name).toBeDefined();
      const r = check(schema as z.ZodType, body);
      expect(r.ok ? 'ok' : `${name}: ${r.violation.field}: ${r.violation.message}`).toBe('ok');
    }
  });

  it.each(SCHEMAS)('%s: arbitrary JSON is answered, never thrown', (_name, schema) => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => answersOnly(schema, value)),
      RUNS,
    );
  });

  it.each(Object.keys(VALID))('%s: mutated valid bodies are answered, never thrown', (name) => {
    const schema = SCHEMAS.find(([n]) => n === name)?.[1] as z.ZodType;
    const seed = VALID[name] as Json;
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (ms) => {
        answersOnly(schema, ms.reduce(mutate, seed));
      }),
      { ...RUNS, numRuns: 150 },
    );
  });
});
