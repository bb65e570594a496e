import { Command } from 'commander';
import type { GatewayClient } from '../../../client/gateway-client.js';
import type { BetaTask } from '../../../contract/beta.js';
import { formatDuration } from '../../../core/duration.js';
import { InterruptedError, TaskFailedError, TimeoutError } from '../../../core/errors.js';
import type { Context, Runtime } from '../../context.js';
import { isTimeout, isInterrupted } from '../../../core/error-map.js';
import { clockOf } from '../../../ui/io.js';

/** The command that resumes a wait (printed on timeout and Ctrl-C). */
export function resumeCommand(ctx: Context, id: string): string {
  const profile = ctx.globals.profile !== undefined ? ` --profile ${ctx.globals.profile}` : '';
  return `gw beta task wait ${id}${profile}`;
}

/**
 * Follows a task to a terminal status (§3) and returns its final record, whatever it is. Throws TimeoutError
 * (exit 4) or InterruptedError (exit 130) carrying the resume command. The journal keeps the last state seen.
 */
export async function followTask(
  ctx: Context,
  client: GatewayClient,
  id: string,
  o: { timeoutMs: number | undefined; resume?: string | undefined },
): Promise<BetaTask> {
  const tasks = await import('../../../client/resources/beta-tasks.js');
  const spin = await ctx.progress.spinner(`task ${id}: waiting`);
  let last: BetaTask | undefined;
  let task: BetaTask;
  try {
    task = await tasks.wait(client, id, {
      timeoutMs: o.timeoutMs,
      signal: ctx.signal,
      onUpdate: (t) => {
        last = t;
        spin.update(`task ${id}: ${t.status}`);
      },
      onTransient: (e, ms) => spin.update(`task ${id}: ${e.message}; retrying in ${formatDuration(ms)}`),
      ...clockOf(ctx.io),
    });
  } catch (e) {
    spin.stop();
    if (last !== undefined) ctx.journal().update('beta-task', id, last.status);
    const hint = `resume with: ${o.resume ?? resumeCommand(ctx, id)}`;
    if (isTimeout(e)) {
      throw new TimeoutError(`task ${id} is still ${last?.status ?? 'unfinished'}: ${e.message}`, {
        hint,
        requestId: e.requestId,
      });
    }
    if (isInterrupted(e)) throw new InterruptedError(`interrupted while waiting for task ${id}`, { hint });
    throw e;
  }
  ctx.journal().update('beta-task', id, task.status);
  if (task.status === 'succeeded') spin.succeed(`task ${id}: succeeded`);
  else spin.fail(`task ${id}: ${task.status}`);
  return task;
}

/** Exit 1 (TaskFailedError) unless the task `succeeded`: failed, expired and cancelled are not successes (§3). */
export function assertSucceeded(task: BetaTask): void {
  if (task.status === 'succeeded') return;
  const why =
    task.error?.message !== undefined ? `: ${task.error.code ?? 'error'}: ${task.error.message}` : '';
  throw new TaskFailedError(`task ${task.id} ended ${task.status}${why}`, {
    state: task.status,
    taskId: task.id,
    hint:
      task.status === 'expired'
        ? 'the task passed execution_expires_after before it finished; create it again'
        : task.status === 'cancelled'
          ? 'the task was cancelled; create it again if needed'
          : 'failed tasks are not billed as successes; check the prompt and references and create it again',
  });
}

/** `gw beta task wait <task_id>`: exit 0 succeeded, 1 failed/expired/cancelled, 4 timeout, 130 Ctrl-C. */
export default function waitCommand(rt: Runtime): Command {
  return new Command('wait')
    .description('wait until a task ends: exit 0 succeeded, 1 failed/expired/cancelled, 4 timeout')
    .argument('<task_id>')
    .option(
      '--timeout <dur>',
      'give up after this long (exit 4, the resume command on stderr); default: no limit',
    )
    .addHelpText(
      'after',
      `
Prints the final task record (like \`gw beta task get\`); with --json the final record as the gateway sent it, also
when it ended failed/expired/cancelled. Ctrl-C exits 130 and prints the command that resumes the wait. Polls with exponential backoff (2 s to 30 s) and tolerates brief 429/5xx answers.

Examples:
  gw beta task wait "$id" --timeout 20m && gw beta task download "$id" -o clip.mp4`,
    )
    .action(
      rt.action(async (ctx, id: string, opts: { timeout?: string }) => {
        const timeoutMs = ctx.waitLimitMs(opts.timeout);
        const client = await ctx.client();
        const task = await followTask(ctx, client, id, { timeoutMs });
        if (ctx.globals.json) ctx.out.json(task);
        else {
          const { taskRows } = await import('./get.js');
          ctx.out.keyValue(taskRows(task));
        }
        assertSucceeded(task);
      }),
    );
}
