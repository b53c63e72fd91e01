import java.lang.reflect.Constructor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.MirrorCheckpointConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.MirrorClient;
import org.apache.kafka.connect.mirror.OffsetSyncStore;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * Asks Kafka's own MirrorMaker 2 client library (connect-mirror-client) what a cluster holds, and
 * prints the answer as one line of JSON on stdout:
 *   translate BOOTSTRAP SOURCE_ALIAS GROUP TIMEOUT_MS
 *     RemoteClusterUtils.translateOffsets: [{"topic":..,"partition":..,"offset":..,"metadata":..}, ...]
 *   remote-offsets BOOTSTRAP SOURCE_ALIAS GROUP TIMEOUT_MS
 *     MirrorClient.remoteConsumerOffsets: the same rows as translate
 *   clusters BOOTSTRAP SOURCE_ALIAS
 *     MirrorClient: {"heartbeatTopics":[..],"upstreamClusters":[..],"replicationHops":n}
 *   sync-store SOURCE_BOOTSTRAP TARGET_BOOTSTRAP SOURCE_ALIAS TARGET_ALIAS LOCATION TOPIC PARTITION:OFFSET,...
 *     MirrorMaker 2's checkpoint task's own reader of its offset-syncs topic (connect-mirror's
 *     OffsetSyncStore, on the cluster offset-syncs.topic.location = LOCATION names), translating
 *     each upstream offset of TOPIC as the checkpoint task does:
 *     [{"partition":..,"upstreamOffset":..,"downstreamOffset":..|null}, ...]
 *   checkpoints BOOTSTRAP TOPIC
 *     every record of the checkpoints topic TOPIC (partition 0, from its start to its end offset),
 *     in log order, read by Checkpoint.deserializeRecord:
 *     [{"group":..,"topic":..,"partition":..,"upstreamOffset":..,"downstreamOffset":..,"metadata":..}, ...]
 */
public final class Mm2ClientProbe {
    private Mm2ClientProbe() { }

    public static void main(String[] args) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[1]);
        switch (args[0]) {
            case "translate": {
                System.out.println(offsetRows(RemoteClusterUtils.translateOffsets(props, args[2], args[3], Duration.ofMillis(Long.parseLong(args[4])))));
                break;
            }
            case "remote-offsets": {
                try (MirrorClient client = new MirrorClient(props)) {
                    System.out.println(offsetRows(client.remoteConsumerOffsets(args[3], args[2], Duration.ofMillis(Long.parseLong(args[4])))));
                }
                break;
            }
            case "checkpoints": {
                System.out.println(checkpoints(props, args[2]));
                break;
            }
            case "clusters": {
                try (MirrorClient client = new MirrorClient(props)) {
                    System.out.println("{\"heartbeatTopics\":" + list(client.heartbeatTopics())
                        + ",\"upstreamClusters\":" + list(client.upstreamClusters())
                        + ",\"replicationHops\":" + client.replicationHops(args[2]) + "}");
                }
                break;
            }
            case "sync-store": {
                Map<String, String> config = new HashMap<>();
                config.put("name", "MirrorCheckpointConnector");
                config.put("connector.class", "org.apache.kafka.connect.mirror.MirrorCheckpointConnector");
                config.put("source.cluster.alias", args[3]);
                config.put("target.cluster.alias", args[4]);
                config.put("source.cluster.bootstrap.servers", args[1]);
                config.put("target.cluster.bootstrap.servers", args[2]);
                config.put("offset-syncs.topic.location", args[5]);
                // The checkpoint task builds its store with a package-private constructor: reached as the task reaches it, with its config.
                Constructor<OffsetSyncStore> constructor = OffsetSyncStore.class.getDeclaredConstructor(MirrorCheckpointConfig.class);
                constructor.setAccessible(true);
                try (OffsetSyncStore store = constructor.newInstance(new MirrorCheckpointConfig(config))) {
                    store.start(true);
                    List<String> rows = new ArrayList<>();
                    for (String spec : args[7].split(",")) {
                        String[] parts = spec.split(":");
                        int partition = Integer.parseInt(parts[0]);
                        long offset = Long.parseLong(parts[1]);
                        OptionalLong translated = store.translateDownstream("mm2-client-probe", new TopicPartition(args[6], partition), offset);
                        rows.add("{\"partition\":" + partition + ",\"upstreamOffset\":" + offset + ",\"downstreamOffset\":" + (translated.isPresent() ? String.valueOf(translated.getAsLong()) : "null") + "}");
                    }
                    System.out.println("[" + String.join(",", rows) + "]");
                }
                break;
            }
            default:
                System.err.println("unknown command " + args[0] + ": expected translate, remote-offsets, clusters, checkpoints or sync-store");
                System.exit(2);
        }
    }

    private static String offsetRows(Map<TopicPartition, OffsetAndMetadata> offsets) {
        List<TopicPartition> partitions = new ArrayList<>(offsets.keySet());
        partitions.sort((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        List<String> rows = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata om = offsets.get(tp);
            rows.add("{\"topic\":" + quote(tp.topic()) + ",\"partition\":" + tp.partition() + ",\"offset\":" + om.offset() + ",\"metadata\":" + quote(om.metadata()) + "}");
        }
        return "[" + String.join(",", rows) + "]";
    }

    private static String checkpoints(Map<String, Object> props, String topic) {
        Map<String, Object> consumerProps = new HashMap<>(props);
        consumerProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
        consumerProps.put("value.deserializer", ByteArrayDeserializer.class.getName());
        consumerProps.put("enable.auto.commit", "false");
        List<String> rows = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            List<TopicPartition> partitions = List.of(tp);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long end = consumer.endOffsets(partitions).get(tp);
            while (consumer.position(tp) < end) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.offset() >= end) continue;
                    Checkpoint checkpoint = Checkpoint.deserializeRecord(record);
                    rows.add("{\"group\":" + quote(checkpoint.consumerGroupId())
                        + ",\"topic\":" + quote(checkpoint.topicPartition().topic())
                        + ",\"partition\":" + checkpoint.topicPartition().partition()
                        + ",\"upstreamOffset\":" + checkpoint.upstreamOffset()
                        + ",\"downstreamOffset\":" + checkpoint.downstreamOffset()
                        + ",\"metadata\":" + quote(checkpoint.metadata()) + "}");
                }
            }
        }
        return "[" + String.join(",", rows) + "]";
    }

    private static String list(Set<String> values) {
        List<String> quoted = new ArrayList<>();
        for (String value : new TreeSet<>(values)) quoted.add(quote(value));
        return "[" + String.join(",", quoted) + "]";
    }

    private static String quote(String value) {
        if (value == null) return "null";
        StringBuilder out = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }
}
