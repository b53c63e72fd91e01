/**
 * The public entry point of kafka-mirror-sidecar (`import ... from 'kafka-mirror-sidecar'`): what
 * a program embedding the mirror needs, and what the `mirror-check` CLI uses. Everything else
 * under `src/` is internal and may change without notice; `package.json` `exports` allows no
 * deeper import.
 */

// Running the mirror: build a MirrorConfig (below), then start() / done / stop().
export { MirrorSidecar, type MirrorSidecarOptions } from './mirror-sidecar.js'

// One flow over adapters of your choice: the pipeline, its ports, and the kafkajs adapters behind them.
export { MirrorFlow, type MirrorFlowOptions } from './pipeline/mirror-flow.js'
export { kafkaFlowPorts } from './kafka/flow-ports.js'
export type {
  AckListener, AckSegment, BatchTracer, CommitCandidate, CommitOffset, FetchControl, FetchedBatch, FlowPorts, NewTopic,
  PartitionAck, PartitionWrite, RecordSink, RecordSource, RecordSourceFactory, SourceListener, TopicCatalog, TopicDescription,
} from './pipeline/ports.js'
export type { MirrorBatch } from './pipeline/mirror-batch.js'
export type { FlowLabels, FlowSnapshot, LifecycleState, PartitionSnapshot, PipelineObserver } from './pipeline/pipeline-observer.js'

// Configuration: every source is parsed and validated into one frozen MirrorConfig; problems throw one ConfigError.
export { configFromMm1, mergeEnv, MM1_FLAGS, type Mm1FlagName, type Mm1Values } from './config/mm1-args.js'
export { configFromMm2, type Mm2Options } from './config/mm2-config.js'
export { sidecarSettingsFromFlags, SIDECAR_FLAGS, type SidecarSettings } from './config/sidecar-settings.js'
export { printableConfig } from './config/print-config.js'
export { hasMessageHandler, type MessageHandlerConfig } from './config/message-handler-config.js'
export { loadMessageHandler, loadMessageHandlers, type LoadedMessageHandler } from './config/message-handler-loader.js'
export type {
  HandlerBytes, HandlerContext, HandlerHeader, HandlerOutput, HandlerRecord, HandlerResult, MessageHandlerFunction,
} from './shared/message-handler-api.js'
export {
  DEFAULT_PRODUCER_LANES, ReplicationPolicyKinds, targetTopicName,
  type CompressionName, type ConsumerSettings, type FlowConfig, type GroupFilter, type GroupSyncConfig, type MirrorConfig,
  type OffsetSyncConfig, type ProducerSettings, type ReplicationPolicy, type ReplicationPolicyKind,
} from './config/mirror-config.js'
export { compileTopicPattern, DEFAULT_GROUPS_EXCLUDE, type TopicFilter } from './config/topic-filter.js'
export { oauthBearerCredentials, saslCredentials, tlsOptions, type AwsMskIamSettings, type ClusterConnection, type GssapiSettings, type OAuthBearerCredentials, type SaslCredentials, type SaslMechanism } from './config/cluster-connection.js'
export { connectionFromProperties } from './config/client-properties.js'
export { parseProperties, type Properties, type PropertyEntry } from './config/java-properties.js'
export { readPropertiesFile } from './config/properties-file.js'
export { ProblemList } from './config/values.js'

// Errors and logging.
export { ConfigError, ErrorCodes, isRetriable, MirrorError, type ConfigProblem, type ErrorCode, type MirrorErrorOptions } from './shared/errors.js'
export { createLogger, LogLevels, silentLogger, type LogFields, type Logger, type LoggerOptions, type LogLevel } from './shared/logger.js'
export type { RecordHeader } from './shared/record-header.js'
export type { HeaderValue, KafkaRecord } from './shared/kafka-record.js'

// The Kafka client's installation: both commands check it at start-up.
export { assertKafkajsPatched } from './kafka/kafkajs-internals.js'
export { packageVersion } from './shared/package-version.js'

// Audits (mirror-check): group offsets and lag, cross-cluster lag, record-by-record verification.
export { AuditClient, type AuditClientOptions, type FetchedBatches, type FetchedRecords, type FetchOptions, type Isolation, type OffsetSpec } from './kafka/audit-client.js'
export { committedOffsets, describeGroupOffsets, groupExists, listConsumerGroups, type GroupMember, type GroupOffsets, type GroupOffsetsOptions } from './check/lag/group-offsets.js'
export { ageSeconds, lagViolations, offsetLag, topicTotals, type LagThresholds, type PartitionLagRow, type TopicLagTotal } from './check/lag/lag.js'
export { PartitionReader, type PartitionReaderOptions } from './mirror-topics/partition-reader.js'
export { lossEvidence, type LossKind, type PartitionOffsets, type RecordedLoss } from './check/lag/loss-evidence.js'
export { mm2OffsetsTopicName, mm2Positions } from './mirror-topics/mm2-positions.js'
export { translateGroupThroughMm2, mm2CheckpointsOf, mm2OffsetSyncsOf, mm2TranslateFrom, type Mm2TranslateOptions, type Mm2TranslationRow } from './check/translate/mm2-offsets.js'
export { decodeMm2Checkpoint, decodeMm2OffsetSync, mm2CheckpointsTopicName, mm2OffsetSyncsTopicName, type Mm2CheckpointRecord, type Mm2OffsetSyncRecord } from './mirror-topics/mm2-records.js'
export { verifyCopy, type CopyVerification, type CopyVerificationOptions, type VerifyUntil } from './check/verify/copy-verification.js'
export { FIRST_COMMON_RECORD_METHOD, OrderAligner, type Aligner, type AlignmentLookup, type AlignmentPoint, type AlignmentRequest, type OrderAlignerOptions } from './check/verify/aligner.js'
export type { EarlierCopies } from './check/verify/earlier-copies-comparison.js'
export { OFFSET_SYNC_ALIGNMENT_METHOD, OffsetSyncAligner } from './check/verify/offset-sync-aligner.js'
export { FindingKinds, type ComparisonCounts, type Finding, type FindingKind } from './check/verify/record-comparator.js'
export { checkPartitionDigests, describeDigestFinding, digestCheckPassed, loadRangeDigests, type DigestCheckOptions, type DigestFinding, type DigestFindingKind, type DigestPartitionCheck } from './mirror-topics/digest-verification.js'
export { describeDigestRange, digestsTopicName, type RangeDigest } from './mirror-topics/range-digest.js'
export type { BeyondCommitted } from './check/verify/beyond-committed.js'
export { beyondCommittedTotal, describeFinding, findMisplaced, totalCounts, unverifiable, verificationPassed, type MisplacedRecord, type PartitionVerification } from './check/verify/verification-report.js'

// Offset translation: exact offset syncs, and a group's committed offsets translated to the target.
export { loadOffsetSyncs, offsetSyncsTopicName } from './check/translate/offset-sync-store.js'
export { OffsetSyncIndex, translateOffset, type Translation } from './mirror-topics/offset-sync-index.js'
export { translateGroupOffsets, type GroupTranslationRow, type TranslateGroupOptions } from './check/translate/translate-group.js'
export { translateBothWays, type TwoWayTranslation } from './check/translate/two-way-translation.js'
export {
  decidePartition, executeGroupFailover, planBlocker, planGroupFailover,
  type FailoverAction, type FailoverBlocker, type FailoverOutcome, type FailoverPartitionPlan, type GroupFailoverPlan, type GroupPresence, type PlanGroupFailoverOptions,
} from './check/translate/group-failover-plan.js'
