import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

// A line that is one string, template or regular expression literal and nothing else but
//   before it: indentation and at most one of a property key (`message: `, `'key': `), a ternary branch
//     (`? `, `: `), `return `, `throw new Error(` or an opening call (`log.warn(`, `fail(`);
//   after it: only `,` `)` `;` `+` and spaces.
// A template may hold substitutions, with templates nested up to two deep in them (`${x ? ` on ${x}` : ''}`).
const SINGLE = String.raw`'(?:[^'\\]|\\.)*'`
const DOUBLE = String.raw`"(?:[^"\\]|\\.)*"`
const templateHolding = (inner) => String.raw`\x60(?:[^\x60\\$]|\\.|\$(?!\{)|\$\{(?:[^\x60}]|${inner})*\})*\x60`
const TEMPLATE = templateHolding(templateHolding(String.raw`\x60(?:[^\x60\\]|\\.)*\x60`))
const REGEXP = String.raw`\/(?:[^/\\[]|\\.|\[(?:[^\]\\]|\\.)*\])+\/[dgimsuvy]*`
const BEFORE = String.raw`(?:[\w$]+:\s*|'[^']*':\s*|"[^"]*":\s*|[?:]\s+|return\s+|throw\s+new\s+[\w$.]+\(|[\w$.]+\()?`
const SINGLE_LITERAL_LINE = String.raw`^\s*${BEFORE}(?:${SINGLE}|${DOUBLE}|${TEMPLATE}|${REGEXP})[\s,);+]*$`

// neostandard: standard's style (2 spaces, no semicolons, single quotes, a space before a function's
// parentheses) for TypeScript, through typescript-eslint and @stylistic.
export default [
  ...neostandard({ ts: true, ignores: resolveIgnoresFromGitignore() }),
  {
    rules: {
      // Lines of at most 160 characters, strings, templates and regular expressions included: code around a
      // literal is wrapped like any other code. The one exemption (ignorePattern, SINGLE_LITERAL_LINE above)
      // keeps a long message whole on one line, where grep finds it.
      '@stylistic/max-len': ['error', {
        code: 160,
        ignoreUrls: true,
        ignoreStrings: false,
        ignoreTemplateLiterals: false,
        ignoreRegExpLiterals: false,
        ignorePattern: SINGLE_LITERAL_LINE,
      }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      // `void promise` marks a promise that is deliberately not awaited (its errors are handled on it).
      'no-void': 'off',
      // Kafka config-provider references (`${env:NAME}`, `${file:path:key}`) and Grafana variables are literal strings.
      'no-template-curly-in-string': 'off',
      // Loop conditions on flags that callbacks set (`while (!stopped)`) are what it reports.
      'no-unmodified-loop-condition': 'off',
    },
  },
  {
    files: ['**/*.ts'],
    rules: {
      // As the code writes type literals and interfaces: commas on one line, nothing at line ends.
      '@stylistic/member-delimiter-style': ['error', { multiline: { delimiter: 'none' }, singleline: { delimiter: 'comma', requireLast: false } }],
      // TypeScript reports real redeclarations; a type named after its `as const` object is how this code writes an enum.
      '@typescript-eslint/no-redeclare': 'off',
    },
  },
  {
    // Program code: an empty function, such as `.catch(() => {})`, says in a comment inside it why nothing is done.
    files: ['src/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'grafana/**/*.ts'],
    ignores: ['bench/test/**'],
    rules: {
      '@typescript-eslint/no-empty-function': 'error',
    },
  },
  {
    // Promise rules with type information (typescript-eslint's type-checked rules): a promise is awaited,
    // returned, or marked `void` with its errors handled on it; none is passed where a callback's result
    // is ignored; `await` only on what can be awaited.
    files: ['src/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'grafana/**/*.ts', 'test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's test(), describe() and their kin return a promise the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [
          { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
        ],
      }],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
]
