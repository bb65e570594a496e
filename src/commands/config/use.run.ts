import { unknownProfile, type Context } from '../../cli/context.js';

/** `gw config use`. */
export default function use(ctx: Context, _opts: unknown, profile: string): void {
  const store = ctx.config();
  if (store.profiles[profile] === undefined) {
    throw unknownProfile(profile, Object.keys(store.profiles), 'config use');
  }
  store.use(profile);
  ctx.out.note(`current profile: ${profile}`);
}
