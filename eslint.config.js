// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/out/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'off',
    },
  },
  {
    // `import { z }` keeps all of zod in the bundle (755 KB: locales, JSON Schema); the namespace import lets
    // esbuild drop what is unused (200 KB), which every command that validates pays for at start-up.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ImportDeclaration[source.value='zod'][importKind!='type'] > ImportSpecifier[imported.name='z'][importKind!='type']",
          message: "use `import * as z from 'zod'` (bundle size)",
        },
      ],
    },
  },
  // Layers (docs/architecture.md): contract ← client ← core ← ui/probe/commands ← cli; sim ← contract only.
  // A wrong import fails `npm run lint`.
  ...layer('src/contract/**/*.ts', ['client', 'core', 'ui', 'commands', 'probe', 'sim', 'cli'], {
    // Known debt: validate.ts and beta.ts still throw the CLI's UsageError instead of returning violations.
    allow: ['src/contract/validate.ts', 'src/contract/beta.ts'],
    allowedTarget: 'core/errors',
  }),
  ...layer('src/client/**/*.ts', ['core', 'ui', 'commands', 'probe', 'sim', 'cli']),
  ...layer('src/core/**/*.ts', ['ui', 'commands', 'probe', 'sim', 'cli']),
  ...layer('src/sim/**/*.ts', ['client', 'core', 'ui', 'commands', 'probe', 'cli']),
  ...layer('src/index.ts', ['commands', 'ui', 'probe', 'sim', 'cli']),
  // HTML reports: rendered from the commands' JSON documents; they never talk to the gateway or the commands.
  ...layer('src/report/**/*.ts', ['client', 'commands', 'sim', 'cli']),
  {
    // Tests parse JSON documents and poke at them; `any` from JSON.parse is expected there.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly' },
    },
  },
);

/**
 * `no-restricted-imports` for one layer: files matching `files` may not import the `banned` top-level folders of
 * src/ (or src/cli.ts). `debt.allow` files may still import `debt.allowedTarget` (listed, to be removed).
 */
function layer(files, banned, debt) {
  const patterns = (names) =>
    names.map((name) => ({
      group: [`**/${name}`, `**/${name}/**`, `**/${name}.js`].map((g) => g),
      message: `layer rule: ${files} may not import src/${name} (see docs/architecture.md)`,
    }));
  const rule = (names) => ['error', { patterns: patterns(names) }];
  const configs = [{ files: [files], rules: { 'no-restricted-imports': rule(banned) } }];
  if (debt !== undefined) {
    const [folder] = debt.allowedTarget.split('/');
    const rest = banned.filter((b) => b !== folder);
    configs.push({
      files: debt.allow,
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              ...patterns(rest),
              {
                group: [`**/${folder}/**`, `!**/${debt.allowedTarget}.js`],
                message: `layer rule: only ${debt.allowedTarget} is tolerated here (known debt)`,
              },
            ],
          },
        ],
      },
    });
  }
  return configs;
}
