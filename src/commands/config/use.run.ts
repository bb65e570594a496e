import { unknownProfile, type Context } from '../../cli/context.js';

/** `gw config use`. */
export default async function use(ctx: Context, _opts: unknown, profile: string): Promise<void> {
  const store = await ctx.config();
  if (store.profiles[profile] === undefined) {
    throw unknownProfile(profile, Object.keys(store.profiles), 'config use');
  }
  store.use(profile);
  ctx.out.note(`current profile: ${profile}`);
}
