/**
 * The public entry point of kafka-mirror-sidecar (`import ... from 'kafka-mirror-sidecar'`): what
 * a program embedding the mirror needs. The `mirror-check` CLI is a program of its own
 * (`src/check/mirror-check.ts`) and does not import this file. Everything else
 * under `src/` is internal and may change without notice; `package.json` `exports` allows no
 * deeper import.
 */

// Running the mirror: build a MirrorConfig (below), then start() / done / stop().
export { MirrorSidecar, type MirrorSidecarOptions } from './sidecar/mirror-sidecar.js'

// One flow over adapters of your choice: the pipeline, its ports, and the kafkajs adapters behind them.
export { MirrorFlow, type MirrorFlowOptions } from './sidecar/pipeline/mirror-flow.js'
export { kafkaFlowPorts } from './kafka/flow-ports.js'
export type {
  AckListener, AckSegment, BatchTracer, CommitCandidate, CommitOffset, FetchControl, FetchedBatch, FlowPorts, NewTopic,
  PartitionAck, PartitionWrite, RecordSink, RecordSource, RecordSourceFactory, SourceListener, TopicCatalog, TopicDescription,
} from './ports/ports.js'
export type { MirrorBatch } from './ports/mirror-batch.js'
export type { FlowLabels, FlowSnapshot, LifecycleState, PartitionSnapshot, PipelineObserver } from './ports/pipeline-observer.js'

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
export {
  oauthBearerCredentials,
  saslCredentials,
  tlsOptions,
  type AwsMskIamSettings,
  type ClusterConnection,
  type GssapiSettings,
  type OAuthBearerCredentials,
  type SaslCredentials,
  type SaslMechanism,
} from './config/cluster-connection.js'
export { connectionFromProperties } from './config/client-properties.js'
export { parseProperties, type Properties, type PropertyEntry } from './config/java-properties.js'
export { readPropertiesFile } from './config/properties-file.js'
export { ProblemList } from './config/values.js'

// Errors and logging.
export { ConfigError, ErrorCodes, isRetriable, MirrorError, type ConfigProblem, type ErrorCode, type MirrorErrorOptions } from './shared/errors.js'
export { createLogger, LogLevels, silentLogger, type LogFields, type Logger, type LoggerOptions, type LogLevel } from './shared/logger.js'
export type { RecordHeader } from './shared/record-header.js'
export type { HeaderValue, KafkaRecord } from './shared/kafka-record.js'

// The Kafka client's installation: both programs check it at start-up.
export { assertKafkajsPatched } from './kafka/kafkajs-internals.js'
export { packageVersion } from './shared/package-version.js'
