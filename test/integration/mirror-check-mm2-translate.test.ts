import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopicIfExists, produce, readAll, sharedClusters, uniqueName, withAdmin } from '../helpers/kafka.js'
import { runMirrorCheck } from '../helpers/mirror-check.js'
import { startMirrorMaker2 } from '../helpers/mirror-maker2.js'
import { consumeAndCommit, readAsGroup, tagged } from '../helpers/offsets.js'
import { waitUntil } from '../helpers/wait.js'

interface Row {
  group: string
  topic: string
  partition: number
  sourceOffset: number
  targetTopic: string
  targetOffset: number | null
  checkpointSourceOffset: number | null
  checkpointTargetOffset: number | null
  status: string
}

test(
  'mirror-check translate --mm2 and failover --mm2 on a running MirrorMaker 2 flow: its offset syncs with its rule, next to the checkpoints it writes; the group moved re-reads, never skips',
  { timeout: 300_000 },
  async t => {
    const { source, target } = await sharedClusters()
    const topic = await createTopic(t, source, { partitions: 2, configs: { 'retention.ms': '-1' } })
    await produce(source, topic, [...tagged('a', 0, 250), ...tagged('a', 1, 40)])
    const group = uniqueName('mm2-app')
    assert.deepEqual(
      [
        ...(await consumeAndCommit(
          source,
          topic,
          group,
          new Map([
            [0, 130],
            [1, 40],
          ])
        )),
      ].sort(),
      [
        [0, 130n],
        [1, 40n],
      ]
    )
    const alias = `src${uniqueName('').replace(/-/g, '')}`
    const targetAlias = `dst${alias.slice(3)}`
    const mirrored = `${alias}.${topic}`
    t.after(async () => {
      for (const cluster of [source, target]) {
        await withAdmin(cluster, async admin => {
          const own = (await admin.listTopics()).filter(name => name.includes(alias.slice(3)))
          if (own.length > 0) await admin.deleteTopics({ topics: own })
        })
      }
      await deleteTopicIfExists(target, mirrored)
    })
    const flow = `${alias}->${targetAlias}`
    await startMirrorMaker2(t, {
      source,
      target,
      sourceAlias: alias,
      targetAlias,
      topics: topic,
      properties: {
        groups: group,
        [`${flow}.groups`]: group,
        'emit.checkpoints.interval.seconds': 1,
        [`${flow}.emit.checkpoints.interval.seconds`]: 1,
        'refresh.groups.interval.seconds': 1,
        [`${flow}.refresh.groups.interval.seconds`]: 1,
      },
    })

    const args = [
      'translate',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--mm2',
      '--source-alias',
      alias,
      '--target-alias',
      targetAlias,
    ]
    let rows: Row[] = []
    let last = ''
    await waitUntil(
      async () => {
        const run = await runMirrorCheck([...args, '--format', 'json'])
        last = `exit ${run.code}\n${run.stdout}\n${run.stderr}`
        if (run.code === 2) return false // the offset-syncs topic is not there yet
        rows = JSON.parse(run.stdout) as Row[]
        // MirrorMaker 2's first checkpoint may come from an older sync (1 for partition 1 in a run); its next ones use the newest.
        return (
          rows.length === 2 && rows.every(r => r.status === 'ok' && r.checkpointSourceOffset === r.sourceOffset && r.checkpointTargetOffset === r.targetOffset)
        )
      },
      {
        timeoutMs: 180_000,
        intervalMs: 1000,
        message: "MirrorMaker 2's checkpoint of the group to carry the translation read from its offset syncs, on both partitions",
      }
    ).catch(error => {
      throw new Error(`${(error as Error).message}; last run: ${last}`)
    })
    t.diagnostic(`MM2-TRANSLATE ${JSON.stringify(rows)}`)
    // A fresh target topic holds the copies at the same offsets: the exact translation is the source offset.
    const copies = await readAll(target, mirrored)
    assert.deepEqual(
      [0, 1].map(p => copies.filter(r => r.partition === p).length),
      [250, 40]
    )
    for (const row of rows) {
      assert.equal(row.targetTopic, mirrored)
      assert.ok(
        row.targetOffset !== null && row.targetOffset <= row.sourceOffset,
        `MirrorMaker 2's rule never lands past the exact offset: ${JSON.stringify(row)}`
      )
    }
    t.diagnostic(
      `MM2-RE-READS ${JSON.stringify(rows.map(r => ({ partition: r.partition, exact: r.sourceOffset, mm2: r.targetOffset, reReads: r.sourceOffset - (r.targetOffset as number) })))}`
    )

    const table = await runMirrorCheck(args)
    assert.equal(table.code, 0, table.stderr)
    assert.match(
      table.stdout,
      /^GROUP +TOPIC +PARTITION +SOURCE-OFFSET +TARGET-TOPIC +TARGET-OFFSET +CHECKPOINT-SOURCE-OFFSET +CHECKPOINT-TARGET-OFFSET +STATUS$/m
    )
    assert.match(table.stderr, /MirrorMaker 2's translation .* re-reads up to offset\.lag\.max/)

    // failover --mm2 commits MirrorMaker 2's translation: the group re-reads on the target, never skips.
    const failover = [
      'failover',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--mm2',
      '--source-alias',
      alias,
      '--target-alias',
      targetAlias,
      '--format',
      'json',
    ]
    const over = await runMirrorCheck([...failover, '--execute'])
    assert.equal(over.code, 0, over.stdout + over.stderr)
    const plan = JSON.parse(over.stdout) as {
      groups: Array<{
        outcome: string
        partitions: Array<{ partition: number, toTopic: string, translatedOffset: number, plannedOffset: number, action: string }>
      }>
    }
    assert.equal(plan.groups[0]?.outcome, 'written')
    assert.deepEqual(
      plan.groups[0]?.partitions.map(p => [p.partition, p.toTopic, p.action]),
      rows.map(r => [r.partition, mirrored, 'commit'])
    )
    // MirrorMaker 2 may emit a newer sync between the translate run and this one: its translation only moves forward, never past the exact offset.
    const planned = new Map(plan.groups[0]?.partitions.map(p => [p.partition, p.plannedOffset]))
    for (const row of rows) {
      const offset = planned.get(row.partition) as number
      assert.ok(
        offset >= (row.targetOffset as number) && offset <= row.sourceOffset,
        `partition ${row.partition}: planned ${offset}, translated ${row.targetOffset} before, exact ${row.sourceOffset}`
      )
    }
    assert.match(over.stderr, /MirrorMaker 2's translation .* re-reads up to offset\.lag\.max .* never skips/)
    const read = await readAsGroup(target, mirrored, group)
    for (const row of rows) {
      const values = read.filter(r => r.partition === row.partition).map(r => r.value?.toString())
      const from = planned.get(row.partition) as number
      const expected = copies.filter(r => r.partition === row.partition && BigInt(r.offset) >= BigInt(from)).map(r => r.value?.toString())
      assert.deepEqual(values, expected, `partition ${row.partition}: from MirrorMaker 2's translation to the end`)
      assert.ok(
        values.includes(`a-${row.partition}-${row.sourceOffset - 1}`) || from === row.sourceOffset,
        'the records before the exact offset are read again'
      )
    }
    const back = await runMirrorCheck([
      'failback',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--mm2',
      '--target-alias',
      targetAlias,
    ])
    assert.equal(back.code, 2)
    assert.match(back.stderr, /failback --mm2: MirrorMaker 2 records no translation back/)

    const wrongAlias = await runMirrorCheck([
      'translate',
      '--source',
      source.bootstrap,
      '--target',
      target.bootstrap,
      '--group',
      group,
      '--mm2',
      '--source-alias',
      alias,
      '--target-alias',
      'nobody',
    ])
    assert.equal(wrongAlias.code, 2)
    assert.match(
      wrongAlias.stderr,
      new RegExp(
        `--mm2: no topic mm2-offset-syncs\\.nobody\\.internal on the source .* nor mm2-offset-syncs\\.${alias}\\.internal on the target cluster .*; give --target-alias`
      )
    )
    const noAlias = await runMirrorCheck(['translate', '--source', source.bootstrap, '--target', target.bootstrap, '--group', group, '--mm2'])
    assert.equal(noAlias.code, 2)
    assert.match(noAlias.stderr, /--mm2 needs --target-alias/)
  }
)
