import type { Command } from 'commander';
import { CONFIG_KEYS } from '../../core/config.js';
import type { Runtime } from '../../cli/context.js';
import { groupCommand } from '../../cli/verb.js';
import { getCommand } from './get.js';
import { listCommand } from './list.js';
import { setCommand } from './set.js';
import { unsetCommand } from './unset.js';
import { useCommand } from './use.js';

/** `gw config set|get|list|use|unset`: profiles in config.json (mode 0600). */
export default function configCommand(rt: Runtime): Command {
  return groupCommand(
    'config',
    'manage profiles: set | get | list | use | unset (file mode 0600; the token is shown redacted)',
    [setCommand(rt), getCommand(rt), listCommand(rt), useCommand(rt), unsetCommand(rt)],
    {
      notes: `Keys: ${CONFIG_KEYS.join(', ')}, headers.<Name> (an extra request header, sent to the gateway's origin only;
a value of - is read from standard input, so a secret stays out of shell history; shown as Name: …last4)`,
      examples: [
        'gw config set baseUrl https://gw.example.com',
        'printf %s "$TOKEN" | gw config set token --token-stdin',
        'gw --profile staging config set baseUrl https://staging.example.com',
        'gw config set headers.x-portkey-provider openai',
        'gw config use staging',
        'gw config list',
      ],
    },
  );
}
