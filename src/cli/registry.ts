import type { Command } from 'commander';
import type { Runtime } from './context.js';

/** A top-level command group, loaded only when it runs (so `gw --help` stays cheap). */
export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<{ default: (rt: Runtime) => Command }>;
}

/** Every top-level command of CLI.md, in the order `gw --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'probe',
    summary: 'run the acceptance checklist against a gateway (or --sim)',
    load: () => import('../commands/probe/index.js'),
  },
  {
    name: 'models',
    summary: 'list the models visible to the token',
    load: () => import('../commands/models/index.js'),
  },
  {
    name: 'chat',
    summary: 'chat completion (streams on a TTY)',
    load: () => import('../commands/chat/index.js'),
  },
  {
    name: 'responses',
    summary: 'responses call (input_text parts)',
    load: () => import('../commands/responses/index.js'),
  },
  {
    name: 'messages',
    summary: 'messages-style call (--max-tokens required)',
    load: () => import('../commands/messages/index.js'),
  },
  {
    name: 'embed',
    summary: 'embeddings: index, dimensions, first values',
    load: () => import('../commands/embed/index.js'),
  },
  { name: 'image', summary: 'image generate | edit', load: () => import('../commands/image/index.js') },
  {
    name: 'video',
    summary: 'async videos: create | get | wait | download',
    load: () => import('../commands/video/index.js'),
  },
  {
    name: 'alpha',
    summary: 'first video family: i2v (image-to-video)',
    load: () => import('../commands/alpha/index.js'),
  },
  {
    name: 'beta',
    summary: 'second video family: task … | asset …',
    load: () => import('../commands/beta/index.js'),
  },
  {
    name: 'api',
    summary: 'call any route of the gateway, print the answer unchanged (as gh api)',
    load: () => import('../commands/api/index.js'),
  },
  {
    name: 'batch',
    summary: 'many requests from a JSONL file: run | status | retry | merge | download',
    load: () => import('../commands/batch/index.js'),
  },
  {
    name: 'load',
    summary: 'latency and throughput under load: sweeps, SLOs, merge, compare',
    load: () => import('../commands/load/index.js'),
  },
  {
    name: 'history',
    summary: 'tasks and assets this machine created (the journal)',
    load: () => import('../commands/history/index.js'),
  },
  {
    name: 'sim',
    summary: 'run a local gateway simulator that follows the contract',
    load: () => import('../commands/sim/index.js'),
  },
  {
    name: 'config',
    summary: 'profiles: set | get | list | use | unset',
    load: () => import('../commands/config/index.js'),
  },
  {
    name: 'login',
    summary: 'save a profile interactively (checks GET /v1/models)',
    load: () => import('../commands/login/index.js'),
  },
  {
    name: 'completion',
    summary: 'print a shell completion script (bash|zsh|fish)',
    load: () => import('../commands/completion/index.js'),
  },
  {
    name: 'doctor',
    summary: 'check the setup: settings and sources, paths, proxies, gateway, token, clock',
    load: () => import('../commands/doctor/index.js'),
  },
];
