// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// `import { z }` keeps all of zod in the bundle (755 KB: locales, JSON Schema); the namespace import lets esbuild
// drop what is unused (200 KB), which every command that validates pays for at start-up.
const ZOD_NAMESPACE = {
  selector:
    "ImportDeclaration[source.value='zod'][importKind!='type'] > ImportSpecifier[imported.name='z'][importKind!='type']",
  message: "use `import * as z from 'zod'` (bundle size)",
};

// The feature folders: the verbs (commands/), the engines (probe, batch, load) and the HTML reports.
const APP = ['commands', 'probe', 'batch', 'load', 'report'];

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
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ZOD_NAMESPACE],
      // No function over 100 lines, counting every line a reader scrolls past (blank lines and comments too): a
      // longer one is split into named steps. No exceptions today; one would be named here with its reason.
      'max-lines-per-function': [
        'error',
        { max: 100, skipBlankLines: false, skipComments: false, IIFEs: true },
      ],
    },
  },
  // Layers (docs/architecture.md): contract ← client ← core ← ui ← probe/batch/load/report ← commands ← cli;
  // sim ← contract only. A wrong import, static or dynamic (`import('../core/x.js')`), fails `npm run lint`;
  // test/unit/layers.test.ts checks the same directions without ESLint.
  ...layer('src/contract/**/*.ts', [...APP, 'ui', 'core', 'client', 'sim', 'cli']),
  ...layer('src/client/**/*.ts', [...APP, 'ui', 'core', 'sim', 'cli']),
  ...layer('src/core/**/*.ts', [...APP, 'ui', 'sim', 'cli']),
  ...layer('src/ui/**/*.ts', [...APP, 'sim', 'cli']),
  ...layer('src/sim/**/*.ts', [...APP, 'ui', 'core', 'client', 'cli']),
  // The library entry: the client, the contract and the engines (load, batch, probe).
  ...layer('src/index.ts', ['commands', 'report', 'ui', 'core', 'sim', 'cli']),
  // HTML reports: rendered from the commands' JSON documents; they never talk to the gateway or the commands. They
  // name those documents by the features' own types (type-only imports: erased, so no runtime cycle).
  ...layer('src/report/**/*.ts', ['client', 'commands', 'sim', 'cli'], ['probe', 'batch', 'load']),
  // The engines may import one another and everything below, never the CLI (commands/, cli/).
  ...layer('src/{probe,batch,load}/**/*.ts', ['commands', 'cli']),
  // The verbs use the CLI machinery (cli/), never the program's entry (cli/main.ts).
  ...layer('src/commands/**/*.ts', ['cli/main.js']),
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
 * One layer's rules: files matching `files` may not import the `banned` top-level folders of src/ (or one named file),
 * neither statically (`@typescript-eslint/no-restricted-imports`, the base rule that also tells type-only imports
 * apart) nor dynamically (`no-restricted-syntax` on `import('…')`, which `no-restricted-imports` does not see); from the `typesOnly` folders they may import types only (`import type`,
 * which TypeScript erases). A banned folder is reached by climbing out of the layer (`../core/x.js`,
 * `../../core/x.js`), so a sibling file of the same name (`./load.js` in report/) is not mistaken for it.
 * `no-restricted-syntax` options replace earlier ones for the same files, so the zod rule is repeated here.
 */
function layer(files, banned, typesOnly = [], ignores = []) {
  const message = (name) => `layer rule: ${files} may not import src/${name} (see docs/architecture.md)`;
  const typesMessage = (name) =>
    `layer rule: ${files} may import only types from src/${name} (\`import type\`; see docs/architecture.md)`;
  // `cli/main.js` names one file; other names a folder (or a file of that name at the top of src/).
  const path = (name, slash) =>
    name.endsWith('.js')
      ? `^(\\.\\.${slash})+${name.replace('/', slash).replace('.', '\\.')}$`
      : `^(\\.\\.${slash})+${name}(${slash}|\\.js$|$)`;
  const imports = [
    ...banned.map((name) => ({ regex: path(name, '/'), message: message(name) })),
    ...typesOnly.map((name) => ({
      regex: path(name, '/'),
      message: typesMessage(name),
      allowTypeImports: true,
    })),
  ];
  // esquery regexes cannot hold a slash: \x2F stands for '/'.
  const dynamic = [...banned, ...typesOnly].flatMap((name) => {
    const re = `/${path(name, '\\x2F')}/`;
    return [
      { selector: `ImportExpression > Literal.source[value=${re}]`, message: message(name) },
      {
        selector: `ImportExpression > TemplateLiteral.source > TemplateElement[value.raw=${re}]`,
        message: message(name),
      },
    ];
  });
  return [
    {
      files: Array.isArray(files) ? files : [files],
      ignores,
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', { patterns: imports }],
        'no-restricted-syntax': ['error', ZOD_NAMESPACE, ...dynamic],
      },
    },
  ];
}
