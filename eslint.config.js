import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

// neostandard: standard's style (2 spaces, no semicolons, single quotes, a space before a function's
// parentheses) for TypeScript, through typescript-eslint and @stylistic.
export default [
  ...neostandard({ ts: true, ignores: resolveIgnoresFromGitignore() }),
  {
    rules: {
      // A long message stays on one line, where grep finds it.
      '@stylistic/max-len': ['error', { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
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
]
