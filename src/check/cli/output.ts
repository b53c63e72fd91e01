import Table from 'cli-table3'
import type { OutputFormat } from './cluster-args.js'

/** A column: its header and how to show a row's value (`-` when missing, as Kafka's tools print it). */
export interface Column<T> {
  readonly header: string
  readonly value: (row: T) => string | number | undefined
  /** Key in JSON output; default the header in camelCase. */
  readonly json?: string
}

const MISSING = '-'

function cell (value: string | number | undefined): string {
  return value === undefined ? MISSING : String(value)
}

function jsonKey (header: string): string {
  return header.toLowerCase().replace(/[^a-z0-9]+(.)/g, (_, c: string) => c.toUpperCase()).replace(/[^a-zA-Z0-9]/g, '')
}

function csvField (text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** Borderless aligned table, headers as Kafka's tools spell them. */
function renderTable<T> (columns: readonly Column<T>[], rows: readonly T[]): string {
  const table = new Table({
    head: columns.map(c => c.header),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: ' ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 1 },
  })
  for (const row of rows) table.push(columns.map(c => cell(c.value(row))))
  return table.toString().split('\n').map(line => line.trimEnd()).join('\n') + '\n'
}

function renderCsv<T> (columns: readonly Column<T>[], rows: readonly T[]): string {
  const lines = [columns.map(c => csvField(c.header)).join(',')]
  for (const row of rows) lines.push(columns.map(c => csvField(cell(c.value(row)))).join(','))
  return lines.join('\n') + '\n'
}

/** Rows as JSON objects; missing values are `null`. */
export function toJsonRows<T> (columns: readonly Column<T>[], rows: readonly T[]): Array<Record<string, string | number | null>> {
  return rows.map(row => Object.fromEntries(columns.map(c => [c.json ?? jsonKey(c.header), c.value(row) ?? null])))
}

/** Which rows are TOTAL rows (sums of the data rows above them), and whether `--totals` asked for them in CSV. */
export interface TotalRows<T> {
  readonly isTotal: (row: T) => boolean
  readonly keep: boolean
}

/**
 * The rows in `format`. CSV holds data rows only, one kind of row per file, so a spreadsheet or
 * a script can sum or filter them; its TOTAL rows come only with `--totals` (`totals.keep`). The
 * table shows them always.
 */
export function render<T> (format: OutputFormat, columns: readonly Column<T>[], rows: readonly T[], totals?: TotalRows<T>): string {
  if (format === 'csv') return renderCsv(columns, totals === undefined || totals.keep ? rows : rows.filter(row => !totals.isTotal(row)))
  if (format === 'json') return JSON.stringify(toJsonRows(columns, rows), null, 2) + '\n'
  return renderTable(columns, rows)
}

export function formatSeconds (seconds: number | undefined): string | undefined {
  if (seconds === undefined) return undefined
  return seconds === 0 ? '0' : seconds.toFixed(1)
}

/** Writes to stdout and waits until it is flushed (so exit codes never cut output). */
export function write (text: string): Promise<void> {
  return new Promise(resolve => { process.stdout.write(text, () => resolve()) })
}

/** A one-line note on stderr (never mixed into table/JSON/CSV on stdout). */
export function note (text: string): void {
  process.stderr.write(text + '\n')
}
