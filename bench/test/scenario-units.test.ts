import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createConnection, createServer, type AddressInfo } from 'node:net'
import { test } from 'node:test'
import { parseBenchArgs, UsageError } from '../bench-options.js'
import { compactionSettled, compactionState } from '../compacted-source.js'
import { DelayLine } from '../delay-line.js'
import { recordLines } from '../kcat-producer.js'
import { parseProxyArgs, startLatencyProxy } from '../latency-proxy.js'
import type { ThroughputMedians } from '../report.js'
import { throughputMarkdown } from '../report.js'
import { cpuPerGbCell, scenarioSummaryMarkdown } from '../scenario-report.js'
import { cpuSecondsPerGb } from '../cpu-per-gb.js'
import { failureReason, scenarioOptions, type ScenarioResult } from '../scenario-run.js'
import { SCENARIOS, ScenarioNames } from '../scenarios.js'
import { wideAreaBrokerProperties, wideAreaPorts } from '../wide-area-target.js'
import { TEST_ENVIRONMENT } from './fixtures/environment.js'

test('--scenario takes a comma list or all, in the order given, without repeats', () => {
  assert.deepEqual(parseBenchArgs(['--scenario', 'tuned,defaults,tuned']).scenarios.map(s => s.name), ['tuned', 'defaults'])
  assert.deepEqual(parseBenchArgs(['--scenario', 'all']).scenarios.map(s => s.name), [...ScenarioNames])
  assert.deepEqual(parseBenchArgs(['--scenario', 'wide-area,all']).scenarios.map(s => s.name)[0], 'wide-area')
  assert.deepEqual(parseBenchArgs([]).scenarios, [], 'without --scenario: one run configured by the flags')
  assert.throws(
    () => parseBenchArgs(['--scenario', 'tuned,lz4']),
    (error: unknown) => error instanceof UsageError && /unknown scenario "lz4"/.test(error.message)
  )
  assert.throws(() => parseBenchArgs(['--scenario', ',']), /expected a comma list/)
})

test('a scenario fixes compression, producer settings and value size: those flags with --scenario are usage errors, and so are --latency / --scale', () => {
  assert.throws(() => parseBenchArgs(['--scenario', 'tuned', '--compression', 'lz4']), /drop --compression/)
  assert.throws(() => parseBenchArgs(['--scenario', 'tuned', '--producer-prop', 'linger.ms=5', '--value-bytes', '10']), /drop --producer-prop, --value-bytes/)
  assert.throws(() => parseBenchArgs(['--scenario', 'tuned', '--latency']), /throughput mode; drop --latency/)
  const quick = parseBenchArgs(['--scenario', 'compacted', '--quick', '--runs', '1'])
  assert.deepEqual([quick.records, quick.runs], [100_000, 1], 'records, runs and the rest still apply to every scenario')
})

test('the scenarios are the issue\'s: tuned is batch.size=262144 linger.ms=10, small records 100 B, wide area 25 ms each way', () => {
  assert.deepEqual(SCENARIOS.tuned.producerProps, { 'batch.size': '262144', 'linger.ms': '10' })
  assert.deepEqual([SCENARIOS['lz4-tuned'].compression, SCENARIOS['zstd-tuned'].compression], ['lz4', 'zstd'])
  assert.deepEqual(SCENARIOS['lz4-tuned'].producerProps, SCENARIOS.tuned.producerProps)
  assert.deepEqual([SCENARIOS.defaults.compression, SCENARIOS.defaults.producerProps], ['none', {}])
  assert.equal(SCENARIOS['small-records'].valueBytes, 100)
  assert.equal(SCENARIOS.compacted.compactedSource, true)
  assert.equal(SCENARIOS['wide-area'].wideAreaDelayMs, 25)
  assert.equal(SCENARIOS['lz4-compressible'].compressibleValues, true)
  assert.equal(SCENARIOS['lz4-compressible'].compression, 'lz4')
  const options = scenarioOptions(parseBenchArgs(['--quick']), SCENARIOS['lz4-tuned'])
  assert.deepEqual([options.compression, options.producerProps, options.valueBytes, options.records], ['lz4', SCENARIOS.tuned.producerProps, 512, 100_000])
})

test('--memory-budget runs the sidecar with a 128 MiB old space; --sidecar-heap-mib sets another; not both', () => {
  assert.equal(parseBenchArgs([]).sidecarMaxOldSpaceMib, undefined)
  assert.equal(parseBenchArgs(['--memory-budget']).sidecarMaxOldSpaceMib, 128)
  assert.equal(parseBenchArgs(['--sidecar-heap-mib', '192']).sidecarMaxOldSpaceMib, 192)
  assert.throws(() => parseBenchArgs(['--sidecar-heap-mib', 'lots']), /--sidecar-heap-mib "lots": expected a positive integer/)
  assert.throws(() => parseBenchArgs(['--memory-budget', '--sidecar-heap-mib', '64']), /give one of them/)
})

test('the delay line releases each chunk no earlier than its delay, oldest first, and counts what it holds', () => {
  const line = new DelayLine<string>(25)
  assert.equal(line.nextDueAtMs, undefined)
  line.push('a', 3, 100)
  line.push('b', 5, 110)
  assert.deepEqual([line.size, line.queuedBytes, line.nextDueAtMs], [2, 8, 125])
  assert.deepEqual(line.takeDue(124.9), [], 'nothing before 25 ms')
  assert.deepEqual(line.takeDue(125), ['a'])
  assert.deepEqual([line.queuedBytes, line.nextDueAtMs], [5, 135])
  line.push('c', 1, 105) // a clock that went back: still after b
  assert.deepEqual(line.takeDue(134), [])
  assert.deepEqual(line.takeDue(1_000), ['b', 'c'])
  assert.deepEqual([line.size, line.queuedBytes, line.nextDueAtMs], [0, 0, undefined])
  assert.throws(() => new DelayLine(-1), /expected a number >= 0/)
  const many = new DelayLine<number>(0)
  for (let i = 0; i < 5_000; i++) many.push(i, 1, i)
  assert.deepEqual(many.takeDue(2_999).length, 3_000)
  assert.deepEqual(many.takeDue(10_000), Array.from({ length: 2_000 }, (_, i) => 3_000 + i), 'order kept across the internal compaction')
})

test('the proxy command line names the flag and value it rejects', () => {
  assert.deepEqual(parseProxyArgs(['--listen', '39003', '--upstream', '127.0.0.1:39002', '--delay-ms', '25']), {
    listenPort: 39003,
    upstreamHost: '127.0.0.1',
    upstreamPort: 39002,
    delayMs: 25,
  })
  assert.throws(() => parseProxyArgs(['--listen', '0x', '--upstream', '127.0.0.1:1', '--delay-ms', '1']), /--listen "0x": expected a port/)
  assert.throws(() => parseProxyArgs(['--listen', '1', '--upstream', 'nohost', '--delay-ms', '1']), /--upstream "nohost": expected HOST:PORT/)
  assert.throws(() => parseProxyArgs(['--listen', '1', '--upstream', 'h:2']), /--delay-ms "": expected milliseconds/)
  assert.throws(() => parseProxyArgs(['--bogus']), /Unknown option/)
})

test('the proxy forwards every byte both ways, each way at least the delay later, and forwards an end after the data', async t => {
  // An upstream that answers each chunk with the same bytes and, once the client ends, one final line.
  const upstream = createServer({ allowHalfOpen: true }, socket => {
    socket.on('data', chunk => socket.write(chunk))
    socket.on('end', () => socket.end('bye\n'))
  })
  upstream.listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  t.after(() => upstream.close())
  const delayMs = 40
  const proxy = await startLatencyProxy({ listenPort: 0, upstreamHost: '127.0.0.1', upstreamPort: (upstream.address() as AddressInfo).port, delayMs })
  t.after(() => proxy.close())
  const client = createConnection({ host: '127.0.0.1', port: (proxy.server.address() as AddressInfo).port, allowHalfOpen: true })
  await once(client, 'connect')
  const payload = Buffer.alloc(3 * 2 ** 20, 7)
  payload.write('first', 0)
  const received: Buffer[] = []
  client.on('data', chunk => received.push(chunk))
  const sentAt = performance.now()
  let firstAt: number | undefined
  client.once('data', () => { firstAt = performance.now() })
  client.end(payload)
  await once(client, 'end')
  const all = Buffer.concat(received)
  assert.equal(all.length, payload.length + 4)
  assert.ok(all.subarray(0, payload.length).equals(payload), 'bytes arrive unchanged and in order')
  assert.equal(all.subarray(payload.length).toString(), 'bye\n', 'the end and the upstream\'s last words come after all the data')
  assert.deepEqual(proxy.traffic, { connections: 1, bytesToUpstream: payload.length, bytesToClients: payload.length + 4 })
  assert.ok(firstAt !== undefined && firstAt - sentAt >= 2 * delayMs - 1, `round trip ${(firstAt ?? 0) - sentAt} ms, expected at least ${2 * delayMs} ms`)
})

test('compaction counts as done once every partition has gaps and two reads agree', () => {
  const spans = new Map([[0, 100], [1, 100]])
  assert.deepEqual(compactionState(spans, new Map([[0, 100], [1, 30]])), { partitions: 2, partitionsWithGaps: 1, removedRecords: 70 })
  assert.equal(compactionSettled(spans, undefined, new Map([[0, 25], [1, 30]])), false, 'one read is not enough')
  assert.equal(compactionSettled(spans, new Map([[0, 100], [1, 30]]), new Map([[0, 100], [1, 30]])), false, 'partition 0 not compacted yet')
  assert.equal(compactionSettled(spans, new Map([[0, 40], [1, 30]]), new Map([[0, 25], [1, 30]])), false, 'still changing')
  assert.equal(compactionSettled(spans, new Map([[0, 25], [1, 30]]), new Map([[0, 25], [1, 30]])), true)
  assert.equal(compactionSettled(new Map(), new Map(), new Map()), false)
})

test('compacted preload lines repeat keys after distinctKeys records', () => {
  const keys = recordLines({ keyBytes: 4, valueBytes: 8, distinctKeys: 3 }, 2, 4).trimEnd().split('\n').map(line => line.split('\t')[0])
  assert.deepEqual(keys, ['0002', '0000', '0001', '0002'])
})

test('the wide-area broker advertises the proxy on its WAN listener and itself on PLAINTEXT', () => {
  const ports = wideAreaPorts({ TEST_EXTRA_PORTS: '41000' })
  assert.deepEqual(ports, { broker: 41000, controller: 41001, behindProxy: 41002, proxy: 41003 })
  const properties = wideAreaBrokerProperties(ports)
  assert.equal(properties['advertised.listeners'], 'PLAINTEXT://127.0.0.1:41000,WAN://127.0.0.1:41003')
  assert.match(properties.listeners!, /WAN:\/\/127\.0\.0\.1:41002/)
  assert.match(properties['listener.security.protocol.map']!, /WAN:PLAINTEXT/)
  assert.throws(() => wideAreaPorts({ TEST_EXTRA_PORTS: 'x' }), /TEST_EXTRA_PORTS "x"/)
})

test('a failed run shows its cause in one line; the summary puts every scenario\'s contenders and ceiling in one row', () => {
  assert.equal(
    failureReason(
      'MirrorMaker exited after copying 5 of 10 records; log x:\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory'
    ),
    'JavaScript heap out of memory'
  )
  assert.equal(failureReason('copied 1 of 2 records in 600 s; giving up\nmore'), 'copied 1 of 2 records in 600 s; giving up')
  const medians = (contender: string, recordsPerSecond: number, runs = 1): ThroughputMedians => ({
    contender,
    label: contender,
    heap: contender === 'sidecar' ? 'node --max-old-space-size=128' : '-Xmx1g',
    runs,
    records: 10,
    startupSeconds: 1,
    copySeconds: 1,
    totalSeconds: 2,
    recordsPerSecond,
    steadyRecordsPerSecond: recordsPerSecond,
    mbPerSecond: 1,
    cpuSeconds: contender === 'sidecar' ? 2 : 4,
    copyCpuSeconds: 1,
    peakRssBytes: (contender === 'sidecar' ? 100 : 400) * 2 ** 20,
    brokerCpuSeconds: 1,
    cpuSecondsPerGb: 4,
    brokerCpuSecondsPerGb: 2,
    duplicates: 0,
    missing: 0,
    maxDuplicates: 0,
    maxMissing: 0,
  })
  const ceiling = {
    recordsPerSecond: 400,
    mbPerSecond: 1,
    copySeconds: 1,
    cpuSeconds: 1,
    peakRssBytes: 1,
    limitedBy: 'producer' as const,
    producer: { recordsPerSecond: 400, mbPerSecond: 1, cpuSeconds: 1, peakRssBytes: 1 },
    consumer: { recordsPerSecond: 500, mbPerSecond: 1, cpuSeconds: 1, peakRssBytes: 1 },
  }
  const result = {
    scenario: SCENARIOS.tuned,
    options: parseBenchArgs(['--scenario', 'tuned']),
    preloadedRecords: 10,
    sourceRecords: 10,
    sourceDistinctKeys: 10,
    notes: [],
    medians: [medians('sidecar', 300), medians('mm2', 150), medians('mm1', 0, 0)],
    ceiling,
    figures: [],
    ceilings: [],
    failures: [{ contender: 'mm1', run: 1, reason: 'Java OutOfMemoryError', message: '' }],
    replication: [],
  } satisfies ScenarioResult
  const env = TEST_ENVIRONMENT
  const markdown = scenarioSummaryMarkdown(env, [result], () => 'tuned.md')
  assert.match(
    markdown,
    /\| scenario \| sidecar records\/s \| MM2 records\/s \| MM1 records\/s \| ceiling records\/s \| sidecar \/ MM2 \| sidecar \/ MM1 \| sidecar \/ ceiling \|/
  )
  assert.match(
    markdown,
    /\| tuned: batch\.size=262144, linger\.ms=10 \| 300 \| 150 \| failed: Java OutOfMemoryError \| 400 \| 2\.00x \| n\/a \| 0\.75x \| 0\.50x \| 4\.0, 4\.0, n\/a \(2\.0\) \| 100 \(0\.25x\) \| node --max-old-space-size=128 \| 0 \/ 0 \| tuned\.md \|/
  )
})

test('a compressible scenario per codec, all tuned with zero-padded values; --scenario compressible runs the five', () => {
  const names = parseBenchArgs(['--scenario', 'compressible']).scenarios.map(s => s.name)
  assert.deepEqual(names, ['none-compressible', 'gzip-compressible', 'snappy-compressible', 'lz4-compressible', 'zstd-compressible'])
  for (const name of names) {
    const scenario = SCENARIOS[name]
    assert.equal(scenario.compression, name.split('-')[0])
    assert.equal(scenario.compressibleValues, true)
    assert.deepEqual(scenario.producerProps, SCENARIOS.tuned.producerProps)
  }
  assert.deepEqual(parseBenchArgs(['--scenario', 'lz4-compressible,compressible']).scenarios.map(s => s.name)[0], 'lz4-compressible')
})

test('--target-outage-seconds: 0 by default, a positive number of seconds, throughput mode only', () => {
  assert.equal(parseBenchArgs([]).targetOutageSeconds, 0)
  assert.equal(parseBenchArgs(['--scenario', 'compressible', '--target-outage-seconds', '20']).targetOutageSeconds, 20)
  assert.throws(() => parseBenchArgs(['--target-outage-seconds', 'soon']), /--target-outage-seconds "soon": expected a positive integer/)
  assert.throws(() => parseBenchArgs(['--target-outage-seconds', '20', '--latency']), /throughput mode; drop --latency/)
  assert.throws(() => parseBenchArgs(['--target-outage-seconds', '20', '--scale']), /throughput mode; drop --scale/)
})

test('a run with a target outage is tabled with when it came and the catch-up; the summary shows the sidecar\'s', () => {
  const run = {
    contender: 'sidecar',
    run: 1,
    records: 1000,
    startupSeconds: 1,
    copySeconds: 21,
    totalSeconds: 22,
    recordsPerSecond: 47,
    steadyRecordsPerSecond: Number.NaN,
    mbPerSecond: 1,
    cpuSeconds: 2,
    copyCpuSeconds: 1,
    peakRssBytes: 120 * 2 ** 20,
    brokerCpuSeconds: 1,
    cpuSecondsPerGb: 4,
    brokerCpuSecondsPerGb: 2,
    duplicates: 0,
    missing: 0,
    outage: { seconds: 20.01, atRecords: 520, frozenAtSeconds: 1.5, resumedToDoneSeconds: 0.6 },
  }
  const medians = { ...run, label: 'mirror-sidecar', heap: 'node --max-old-space-size=128', runs: 1, maxDuplicates: 0, maxMissing: 0 }
  const env = TEST_ENVIRONMENT
  const options = parseBenchArgs(['--scenario', 'gzip-compressible', '--target-outage-seconds', '20'])
  const markdown = throughputMarkdown(env, options, [medians], undefined, { runs: [run] })
  assert.match(markdown, /## Target outage/)
  assert.match(markdown, /\| mirror-sidecar \| 1 \| 520 \(52%\) \| 20\.0 \| 1\.5 \| 0\.6 \| 22\.0 \| 120 \| 0 \/ 0 \|/)
  const result = {
    scenario: SCENARIOS['gzip-compressible'],
    options,
    preloadedRecords: 1000,
    sourceRecords: 1000,
    sourceDistinctKeys: 1000,
    notes: [],
    medians: [medians],
    ceiling: undefined,
    figures: [run],
    ceilings: [],
    failures: [],
    replication: [],
  } satisfies ScenarioResult
  assert.match(scenarioSummaryMarkdown(env, [result], () => 'x.md'), /\| 52%, 20\.0 s; 0\.6 s \| x\.md \|/)
  assert.doesNotMatch(throughputMarkdown(env, options, [medians], undefined, { runs: [{ ...run, outage: undefined }] }), /## Target outage/)
})

test(
  'decoding scenarios: an uncompressed source recompressed to lz4 or zstd, gzip to zstd, an identity handler; --scenario decoding runs them beside compacted',
  () => {
    assert.deepEqual(
      parseBenchArgs(['--scenario', 'decoding']).scenarios.map(s => s.name),
      ['recompress-lz4', 'recompress-zstd', 'gzip-to-zstd', 'handler', 'compacted']
    )
    assert.deepEqual([SCENARIOS['recompress-lz4'].sourceCompression, SCENARIOS['recompress-lz4'].compression], ['none', 'lz4'])
    assert.deepEqual([SCENARIOS['recompress-zstd'].sourceCompression, SCENARIOS['recompress-zstd'].compression], ['none', 'zstd'])
    assert.deepEqual([SCENARIOS['gzip-to-zstd'].sourceCompression, SCENARIOS['gzip-to-zstd'].compression], ['gzip', 'zstd'])
    assert.equal(SCENARIOS.handler.messageHandler, true)
    assert.equal(SCENARIOS.handler.compression, 'none')
    for (const name of ['recompress-lz4', 'recompress-zstd', 'gzip-to-zstd', 'handler'] as const) {
      assert.deepEqual(SCENARIOS[name].producerProps, SCENARIOS.tuned.producerProps)
    }
    assert.throws(
      () => parseBenchArgs(['--scenario', 'handler', '--compression', 'lz4']),
      /sets compression, producer settings and value size itself; drop --compression/
    )
  }
)

test('wide area at 25 and 100 ms each way: two scenarios with tuned producers', () => {
  assert.deepEqual(parseBenchArgs(['--scenario', 'wide-area,wide-area-100']).scenarios.map(s => s.wideAreaDelayMs), [25, 100])
  assert.deepEqual(SCENARIOS['wide-area-100'].producerProps, SCENARIOS.tuned.producerProps)
  assert.ok(parseBenchArgs(['--scenario', 'all']).scenarios.some(s => s.name === 'wide-area-100'))
})

test('CPU seconds per GB copied: over 10^9 bytes of keys and values; n/a without CPU or bytes', () => {
  assert.equal(cpuSecondsPerGb(5.28, 1_000_000, 528), 10)
  assert.equal(cpuSecondsPerGb(1, 2_000_000, 500), 1)
  assert.ok(Number.isNaN(cpuSecondsPerGb(Number.NaN, 10, 10)))
  assert.ok(Number.isNaN(cpuSecondsPerGb(1, 0, 528)))
  const medians = (contender: string, cpuSecondsPerGb: number): ThroughputMedians => ({
    contender,
    label: contender,
    heap: 'h',
    runs: 1,
    records: 10,
    startupSeconds: 1,
    copySeconds: 1,
    totalSeconds: 2,
    recordsPerSecond: 1,
    steadyRecordsPerSecond: 1,
    mbPerSecond: 1,
    cpuSeconds: 1,
    copyCpuSeconds: 1,
    peakRssBytes: 1,
    brokerCpuSeconds: 1,
    cpuSecondsPerGb,
    brokerCpuSecondsPerGb: 6.789,
    duplicates: 0,
    missing: 0,
    maxDuplicates: 0,
    maxMissing: 0,
  })
  assert.equal(cpuPerGbCell(medians('sidecar', 9.84), medians('mm2', 60.5), undefined), '9.8, 60.5, n/a (6.8)')
  const env = TEST_ENVIRONMENT
  const markdown = throughputMarkdown(env, parseBenchArgs([]), [medians('sidecar', 9.84)], undefined)
  assert.match(markdown, /\| CPU s \(brokers\) \| CPU s \/ GB \(mirror\) \| CPU s \/ GB \(brokers\) \|/)
  assert.match(markdown, /\| 9\.8 \| 6\.8 \| 0 \/ 0 \|/)
})
