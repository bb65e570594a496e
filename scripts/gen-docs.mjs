// Writes docs/commands.md from the program's own help pages (`npm run docs` after changing a command), so the
// reference never drifts from `gw <command> --help`. Needs dist/ (npm run build).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { buildProgram, main } from '../dist/cli.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

async function help(path) {
  let text = '';
  const stdout = new PassThrough();
  stdout.on('data', (c) => (text += c.toString('utf8')));
  await main([...path, '--help'], {
    stdout,
    stderr: new PassThrough(),
    stdin: Readable.from([]),
    env: { NO_COLOR: '1' },
  });
  return text.trimEnd();
}

const rt = { io: {}, action: () => async () => {} };
const program = await buildProgram(['completion'], rt);
const paths = [];
const walk = (cmd, path) => {
  for (const sub of cmd.commands) {
    if (sub.name() === 'help') continue;
    const p = [...path, sub.name()];
    paths.push(p);
    walk(sub, p);
  }
};
walk(program, []);

let md = `# Commands and flags

Generated from \`gw <command> --help\` by \`npm run docs\`; the help pages are the source. Global flags
(\`--json\`, \`--quiet\`, \`--verbose\`, \`--no-color\`, \`--profile\`, \`--base-url\`, \`--timeout\`, \`--no-validate\`)
work with every command. Output shapes: [output.md](output.md); exit codes: [exit-codes.md](exit-codes.md).

## gw

\`\`\`text
${await help([])}
\`\`\`
`;
for (const p of paths) md += `\n## gw ${p.join(' ')}\n\n\`\`\`text\n${await help(p)}\n\`\`\`\n`;
writeFileSync(join(root, 'docs', 'commands.md'), md);
console.log(`docs/commands.md: ${paths.length + 1} commands`);
