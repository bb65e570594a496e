import * as z from 'zod';

/** One entry of `GET /v1/models` (common.md §4; entry fields are "not shown", so OpenAI's Model shape is assumed). */
export const modelSchema = z.looseObject({
  id: z.string(),
  object: z.string().optional(),
  created: z.number().optional(),
  owned_by: z.string().optional(),
});
export type Model = z.infer<typeof modelSchema>;

/** `GET /v1/models` answer. */
export const modelListSchema = z.looseObject({
  object: z.string().optional(),
  data: z.array(modelSchema),
});
export type ModelList = z.infer<typeof modelListSchema>;
