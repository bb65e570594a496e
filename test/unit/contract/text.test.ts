import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  chatCreateParamsSchema,
  embeddingCreateParamsSchema,
  imageEditParamsSchema,
  imageEditShapeSchema,
  imageGenerateParamsSchema,
  isPublicHttpsUrl,
  messageCreateParamsSchema,
  parseImageSize,
  responseCreateParamsSchema,
} from '../../../src/contract/text.js';
import { check } from '../../../src/contract/validate.js';

/** One rule: a body that keeps it, a body that breaks it, the field named and the rule's wording. */
interface RuleCase {
  rule: string;
  valid: Record<string, unknown>;
  invalid: Record<string, unknown>;
  field: string;
  message: RegExp;
}

function table(name: string, schema: z.ZodType, base: Record<string, unknown>, cases: RuleCase[]): void {
  describe(name, () => {
    it('accepts the base body', () => {
      expect(check(schema, base)).toMatchObject({ ok: true });
    });
    for (const c of cases) {
      it(`${c.rule}: valid`, () => {
        const r = check(schema, { ...base, ...c.valid });
        expect(r.ok ? 'ok' : `${r.violation.field}: ${r.violation.message}`).toBe('ok');
      });
      it(`${c.rule}: invalid names ${c.field}`, () => {
        const body: Record<string, unknown> = { ...base, ...c.invalid };
        for (const [k, v] of Object.entries(c.invalid)) if (v === undefined) delete body[k];
        const r = check(schema, body);
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.violation.field).toBe(c.field);
          expect(r.violation.message).toMatch(c.message);
        }
      });
    }
  });
}

const user = (content: unknown): Record<string, unknown> => ({ messages: [{ role: 'user', content }] });

table('chat body', chatCreateParamsSchema, { model: 'chat-3.7-plus', ...user('hi') }, [
  {
    rule: 'model is required',
    valid: { model: 'm' },
    invalid: { model: undefined },
    field: 'model',
    message: /is required/,
  },
  {
    rule: 'model is a string',
    valid: { model: 'chat-3-vl-plus' },
    invalid: { model: 7 },
    field: 'model',
    message: /must be a string/,
  },
  {
    rule: 'model is not empty',
    valid: { model: 'x' },
    invalid: { model: '' },
    field: 'model',
    message: /must not be empty/,
  },
  {
    rule: 'messages is required',
    valid: user('x'),
    invalid: { messages: undefined },
    field: 'messages',
    message: /is required/,
  },
  {
    rule: 'messages is an array',
    valid: user('x'),
    invalid: { messages: 'hi' },
    field: 'messages',
    message: /must be an array of \{role, content\}/,
  },
  {
    rule: 'messages is not empty',
    valid: user('x'),
    invalid: { messages: [] },
    field: 'messages',
    message: /at least one message/,
  },
  {
    rule: 'role is a string',
    valid: {
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
      ],
    },
    invalid: { messages: [{ role: 1, content: 'x' }] },
    field: 'messages[0].role',
    message: /must be a string/,
  },
  {
    rule: 'content is a string or an array of parts',
    valid: user([{ type: 'text', text: 'a' }]),
    invalid: user({ text: 'a' }),
    field: 'messages[0].content',
    message: /must be a string or an array of \{type:'text'\|'image_url'\} parts/,
  },
  {
    rule: 'content is required',
    valid: user('x'),
    invalid: { messages: [{ role: 'user' }] },
    field: 'messages[0].content',
    message: /is required/,
  },
  {
    rule: "part type is 'text' or 'image_url'",
    valid: user([{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]),
    invalid: user([{ type: 'input_text', text: 'a' }]),
    field: 'messages[0].content[0].type',
    message: /must be 'text' or 'image_url'/,
  },
  {
    rule: 'text part carries a string',
    valid: user([{ type: 'text', text: '' }]),
    invalid: user([{ type: 'text', text: 5 }]),
    field: 'messages[0].content[0].text',
    message: /must be a string \(text part\)/,
  },
  {
    rule: 'image_url part carries {url}',
    valid: user([{ type: 'image_url', image_url: { url: 'https://cdn.example.org/x.jpg' } }]),
    invalid: user([{ type: 'image_url', image_url: 'https://example.com/a.png' }]),
    field: 'messages[0].content[0].image_url',
    message: /must be an object \{url\}/,
  },
  {
    rule: 'image url is public https',
    valid: user([
      { type: 'text', text: 'see' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    ]),
    invalid: user([
      { type: 'text', text: 'see' },
      { type: 'image_url', image_url: { url: 'http://example.com/a.png' } },
    ]),
    field: 'messages[0].content[1].image_url.url',
    message: /must be a public https URL \(non-public image URLs/,
  },
  {
    rule: 'image url is not a private address',
    valid: user([{ type: 'image_url', image_url: { url: 'https://8.8.8.8/a.png' } }]),
    invalid: user([{ type: 'image_url', image_url: { url: 'https://192.168.1.10/a.png' } }]),
    field: 'messages[0].content[0].image_url.url',
    message: /public https URL/,
  },
  {
    rule: 'stream is a boolean',
    valid: { stream: true },
    invalid: { stream: 'yes' },
    field: 'stream',
    message: /must be a boolean/,
  },
  {
    rule: 'max_tokens is an integer >= 1',
    valid: { max_tokens: 1 },
    invalid: { max_tokens: 0 },
    field: 'max_tokens',
    message: /integer >= 1/,
  },
  {
    rule: 'max_tokens is an integer',
    valid: { max_tokens: 64 },
    invalid: { max_tokens: 2.5 },
    field: 'max_tokens',
    message: /integer >= 1/,
  },
]);

const rinput = (content: unknown, role: unknown = 'user'): Record<string, unknown> => ({
  input: [{ role, content }],
});

table(
  'responses body',
  responseCreateParamsSchema,
  { model: 'chat-3.7-plus', ...rinput([{ type: 'input_text', text: 'hi' }]) },
  [
    {
      rule: 'model is required',
      valid: { model: 'm' },
      invalid: { model: undefined },
      field: 'model',
      message: /is required/,
    },
    {
      rule: 'input is required',
      valid: rinput([]),
      invalid: { input: undefined },
      field: 'input',
      message: /is required/,
    },
    {
      rule: 'input is an array',
      valid: rinput([]),
      invalid: { input: 'hello' },
      field: 'input',
      message: /must be an array of \{role, content\} items/,
    },
    {
      rule: 'input is not empty',
      valid: rinput([]),
      invalid: { input: [] },
      field: 'input',
      message: /at least one item/,
    },
    {
      rule: 'role is a string',
      valid: rinput([], 'user'),
      invalid: rinput([], 3),
      field: 'input[0].role',
      message: /must be a string/,
    },
    {
      rule: 'content is an array of parts',
      valid: rinput([{ type: 'input_text', text: 'a' }]),
      invalid: rinput('a'),
      field: 'input[0].content',
      message: /must be an array of \{type:'input_text', text\} parts/,
    },
    {
      rule: "part type is 'input_text'",
      valid: rinput([{ type: 'input_text', text: 'a' }]),
      invalid: rinput([{ type: 'text', text: 'a' }]),
      field: 'input[0].content[0].type',
      message: /must be 'input_text'/,
    },
    {
      rule: 'part text is a string',
      valid: rinput([{ type: 'input_text', text: '' }]),
      invalid: rinput([{ type: 'input_text' }]),
      field: 'input[0].content[0].text',
      message: /is required/,
    },
    {
      rule: 'stream is a boolean',
      valid: { stream: false },
      invalid: { stream: 1 },
      field: 'stream',
      message: /must be a boolean/,
    },
  ],
);

table('messages body', messageCreateParamsSchema, { model: 'chat-3.7-plus', max_tokens: 16, ...user('hi') }, [
  {
    rule: 'model is required',
    valid: { model: 'm' },
    invalid: { model: undefined },
    field: 'model',
    message: /is required/,
  },
  {
    rule: 'max_tokens is required',
    valid: { max_tokens: 1 },
    invalid: { max_tokens: undefined },
    field: 'max_tokens',
    message: /is required/,
  },
  {
    rule: 'max_tokens is an integer',
    valid: { max_tokens: 4096 },
    invalid: { max_tokens: 1.5 },
    field: 'max_tokens',
    message: /must be an integer >= 1/,
  },
  {
    rule: 'max_tokens is a number, not a string',
    valid: { max_tokens: 5 },
    invalid: { max_tokens: '5' },
    field: 'max_tokens',
    message: /integer >= 1/,
  },
  {
    rule: 'max_tokens >= 1',
    valid: { max_tokens: 1 },
    invalid: { max_tokens: 0 },
    field: 'max_tokens',
    message: /integer >= 1/,
  },
  {
    rule: 'messages is required',
    valid: user('x'),
    invalid: { messages: undefined },
    field: 'messages',
    message: /is required/,
  },
  {
    rule: 'messages is not empty',
    valid: user('x'),
    invalid: { messages: [] },
    field: 'messages',
    message: /at least one message/,
  },
  {
    rule: 'role is a string',
    valid: user('x'),
    invalid: { messages: [{ content: 'x' }] },
    field: 'messages[0].role',
    message: /is required/,
  },
  {
    rule: 'content is a string or typed blocks',
    valid: user([{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }]),
    invalid: user(42),
    field: 'messages[0].content',
    message: /must be a string or an array of \{type, …\} blocks/,
  },
  {
    rule: 'each block has a type',
    valid: user([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }]),
    invalid: user([{ text: 'a' }]),
    field: 'messages[0].content[0].type',
    message: /is required/,
  },
  {
    rule: 'system is a string or text blocks',
    valid: { system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }] },
    invalid: { system: 12 },
    field: 'system',
    message: /must be a string or an array of \{type:'text', text\} blocks/,
  },
  {
    rule: "system blocks are type 'text'",
    valid: { system: 'be brief' },
    invalid: { system: [{ type: 'image', text: 'x' }] },
    field: 'system[0].type',
    message: /must be 'text'/,
  },
  {
    rule: 'thinking and tool fields pass through',
    valid: { thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [{ name: 't', input_schema: {} }] },
    invalid: { stream: 'no' },
    field: 'stream',
    message: /must be a boolean/,
  },
]);

table('embeddings body', embeddingCreateParamsSchema, { model: 'text-embedding-v4', input: ['a'] }, [
  {
    rule: 'model is required',
    valid: { model: 'm' },
    invalid: { model: undefined },
    field: 'model',
    message: /is required/,
  },
  {
    rule: 'input is an array of strings',
    valid: { input: ['a', 'b'] },
    invalid: { input: 'a' },
    field: 'input',
    message: /must be an array of strings/,
  },
  {
    rule: 'input items are strings',
    valid: { input: ['x'] },
    invalid: { input: ['a', 2] },
    field: 'input[1]',
    message: /must be a string/,
  },
  {
    rule: 'input is not empty',
    valid: { input: [''] },
    invalid: { input: [] },
    field: 'input',
    message: /at least one string/,
  },
  {
    rule: 'encoding_format is float or base64',
    valid: { encoding_format: 'base64' },
    invalid: { encoding_format: 'hex' },
    field: 'encoding_format',
    message: /'float' or 'base64'/,
  },
]);

const imageRules: RuleCase[] = [
  {
    rule: 'model is required',
    valid: { model: 'm' },
    invalid: { model: undefined },
    field: 'model',
    message: /is required/,
  },
  {
    rule: 'prompt is a string',
    valid: { prompt: 'a fox' },
    invalid: { prompt: ['a'] },
    field: 'prompt',
    message: /must be a string/,
  },
  {
    rule: 'prompt is required',
    valid: { prompt: 'x' },
    invalid: { prompt: undefined },
    field: 'prompt',
    message: /is required/,
  },
  {
    rule: 'size is WxH',
    valid: { size: '1024x1024' },
    invalid: { size: '1024' },
    field: 'size',
    message: /<width>x<height> with positive integers/,
  },
  {
    rule: 'size sides are positive',
    valid: { size: '1x1' },
    invalid: { size: '0x512' },
    field: 'size',
    message: /positive integers/,
  },
  {
    rule: 'size sides are integers',
    valid: { size: '1792x1024' },
    invalid: { size: '1.5x2' },
    field: 'size',
    message: /positive integers/,
  },
  {
    rule: 'size uses a lower-case x',
    valid: { size: '512x768' },
    invalid: { size: '512X768' },
    field: 'size',
    message: /<width>x<height>/,
  },
  {
    rule: 'size is a string',
    valid: { size: '64x64' },
    invalid: { size: 1024 },
    field: 'size',
    message: /<width>x<height>/,
  },
  {
    rule: 'response_format is url or b64_json',
    valid: { response_format: 'b64_json' },
    invalid: { response_format: 'png' },
    field: 'response_format',
    message: /'url' or 'b64_json'/,
  },
  {
    rule: 'n is a positive integer',
    valid: { n: 1 },
    invalid: { n: 0 },
    field: 'n',
    message: /integer >= 1/,
  },
  { rule: 'n is an integer', valid: { n: 4 }, invalid: { n: 1.5 }, field: 'n', message: /integer >= 1/ },
];

table(
  'image generation body',
  imageGenerateParamsSchema,
  { model: 'image-gen-1', prompt: 'a fox' },
  imageRules,
);

table(
  'image edit body',
  imageEditParamsSchema,
  { model: 'image-edit-1', prompt: 'blue', images: [{ image_url: 'https://example.com/a.png' }] },
  [
    ...imageRules,
    {
      rule: 'images is required',
      valid: {},
      invalid: { images: undefined },
      field: 'images',
      message: /is required/,
    },
    {
      rule: 'images is not empty',
      valid: {},
      invalid: { images: [] },
      field: 'images',
      message: /at least one \{image_url\}/,
    },
    {
      rule: 'images items are {image_url}',
      valid: {},
      invalid: { images: ['https://example.com/a.png'] },
      field: 'images[0]',
      message: /object/,
    },
    {
      rule: 'image_url is https',
      valid: {
        images: [{ image_url: 'https://example.com/a.png' }, { image_url: 'https://img.example.net/b.jpg' }],
      },
      invalid: { images: [{ image_url: 'http://example.com/a.png' }] },
      field: 'images[0].image_url',
      message: /must be a public https URL \(image edit input URLs/,
    },
    {
      rule: 'image_url is public',
      valid: { images: [{ image_url: 'https://example.com/a.png' }] },
      invalid: { images: [{ image_url: 'https://localhost/a.png' }] },
      field: 'images[0].image_url',
      message: /publicly reachable/,
    },
  ],
);

describe('image edit shape (what the simulator checks)', () => {
  it('accepts a non-public URL: the gateway answers it with an empty product', () => {
    const body = { model: 'image-edit-1', prompt: 'x', images: [{ image_url: 'http://10.0.0.1/a.png' }] };
    expect(check(imageEditShapeSchema, body).ok).toBe(true);
    expect(check(imageEditParamsSchema, body).ok).toBe(false);
  });
});

describe('isPublicHttpsUrl (common.md §4 rules 3–4)', () => {
  it.each([
    ['https://example.com/a.png', true],
    ['https://8.8.8.8/a.png', true],
    ['https://[2001:4860:4860::8888]/a.png', true],
    ['http://example.com/a.png', false],
    ['ftp://example.com/a.png', false],
    ['data:image/png;base64,AAAA', false],
    ['https://localhost/a.png', false],
    ['https://api.localhost/a.png', false],
    ['https://127.0.0.1/a.png', false],
    ['https://10.1.2.3/a.png', false],
    ['https://172.16.0.1/a.png', false],
    ['https://169.254.169.254/latest', false],
    ['https://[::1]/a.png', false],
    ['https://[::ffff:192.168.0.1]/a.png', false],
    ['https://[fd00::1]/a.png', false],
    ['https://intranet/a.png', false],
    ['https://printer.local/a.png', false],
    ['not a url', false],
  ])('%s → %s', (url, ok) => {
    expect(isPublicHttpsUrl(url)).toBe(ok);
  });
});

describe('parseImageSize', () => {
  it('parses <width>x<height> of positive integers only', () => {
    expect(parseImageSize('1024x768')).toEqual({ width: 1024, height: 768 });
    for (const bad of ['', 'x', '10x', 'x10', '0x1', '01x1', '-1x5', '1x1x1', ' 1x1']) {
      expect(parseImageSize(bad)).toBeUndefined();
    }
  });
});

describe('check on text bodies', () => {
  it('returns the violation naming the field and the rule', () => {
    const r = check(messageCreateParamsSchema, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.violation).toMatchObject({ field: 'max_tokens', message: 'is required' });
  });

  it('keeps pass-through fields', () => {
    const body = {
      model: 'chat-3.7-plus',
      max_tokens: 8,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] },
      ],
      thinking: { type: 'enabled', budget_tokens: 4 },
    };
    const r = check(messageCreateParamsSchema, body);
    expect(r.ok && r.value).toEqual(body);
  });
});
