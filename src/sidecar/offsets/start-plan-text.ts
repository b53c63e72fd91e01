import type { StartSource } from './start-plan.js'
import type { FlowStartPlan } from './start-positions.js'

/** The FROM column: why a partition starts where it does. */
function fromLabel (from: StartSource, autoOffsetReset: string): string {
  switch (from) {
    case 'positions': return 'exactly-once position'
    case 'group': return 'own group'
    case 'mm2': return 'MirrorMaker 2\'s Connect offsets'
    case 'reset': return `auto.offset.reset=${autoOffsetReset}`
  }
}

/** Rows padded into columns, two spaces apart, the last column unpadded. */
function columns (rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(row => row[i]?.length ?? 0))) ?? []
  return rows.map(row => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd())
}

/**
 * `mirror-sidecar --dry-run`'s report of one flow: a heading naming the flow, its group and where
 * MirrorMaker 2's positions were looked for, then one row per source partition: where it starts,
 * why, and MirrorMaker 2's position when it stored one.
 */
export function renderStartPlan (plan: FlowStartPlan, autoOffsetReset: string): string {
  const lines = [`flow ${plan.flow}: group ${plan.groupId}`]
  if (plan.mm2 !== undefined) {
    lines.push(`MirrorMaker 2's positions: ${plan.mm2.offsetsTopic} on ${plan.mm2.cluster}, connector ${plan.mm2.connector}: ${plan.mm2.found} of ${plan.partitions.length} partitions`)
  }
  if (plan.partitions.length === 0) {
    lines.push('no source topic matches the flow\'s topics')
    return lines.join('\n') + '\n'
  }
  const rows = [['TOPIC', 'PARTITION', 'START', 'FROM', 'MM2', 'NOTE']]
  for (const p of plan.partitions) {
    rows.push([
      p.topic,
      String(p.partition),
      String(p.offset),
      fromLabel(p.from, autoOffsetReset),
      p.mm2Next === undefined ? '-' : String(p.mm2Next),
      p.note ?? '',
    ])
  }
  return [...lines, ...columns(rows)].join('\n') + '\n'
}
