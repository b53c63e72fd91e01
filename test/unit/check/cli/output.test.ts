import assert from 'node:assert/strict'
import { test } from 'node:test'
import { render, type Column } from '../../../../src/check/cli/output.js'

interface Row { readonly partition: number | 'TOTAL', readonly lag: number }
const columns: Column<Row>[] = [
  { header: 'PARTITION', value: r => r.partition },
  { header: 'LAG', value: r => r.lag },
]
const rows: Row[] = [{ partition: 0, lag: 2 }, { partition: 1, lag: 3 }, { partition: 'TOTAL', lag: 5 }]
const isTotal = (r: Row): boolean => r.partition === 'TOTAL'

test('CSV holds the data rows only; --totals adds the TOTAL rows; the table shows them always', () => {
  assert.equal(render('csv', columns, rows, { isTotal, keep: false }), 'PARTITION,LAG\n0,2\n1,3\n')
  assert.equal(render('csv', columns, rows, { isTotal, keep: true }), 'PARTITION,LAG\n0,2\n1,3\nTOTAL,5\n')
  assert.match(render('table', columns, rows, { isTotal, keep: false }), /\nTOTAL +5\n$/)
})
