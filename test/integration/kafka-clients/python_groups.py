"""Two group consumers of kafka-python or confluent-kafka (librdkafka, classic protocol) through the
Sluice gateway: both join, consume and commit the first batch; one leaves; the other is given every
partition and resumes from the committed offsets, reading exactly the second batch. confluent also
creates, describes and deletes a topic with the AdminClient. Prints one JSON object."""
import json
import sys
import time

library, bootstrap, topic, group = sys.argv[1:5]
PARTITIONS, PER_BATCH = 4, 5


def deadline(seconds):
    end = time.time() + seconds
    return lambda: time.time() < end


if library == "kafka-python":
    from kafka import KafkaConsumer, KafkaProducer

    def consumer(name):
        c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=name, enable_auto_commit=False,
                          auto_offset_reset="earliest", session_timeout_ms=10000, heartbeat_interval_ms=1000)
        c.subscribe([topic])
        return c

    def poll(c):
        out = []
        for records in c.poll(timeout_ms=300).values():
            out += [(r.partition, r.offset, r.value.decode()) for r in records]
        if out:
            c.commit()
        return out

    def assignment(c):
        return sorted(tp.partition for tp in c.assignment())

    def produce(batch):
        p = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        for part in range(PARTITIONS):
            for i in range(PER_BATCH):
                p.send(topic, value=f"b{batch}-p{part}-{i}".encode(), partition=part)
        p.flush(30)
        p.close()

    def committed(c):
        from kafka import TopicPartition
        return {str(p): c.committed(TopicPartition(topic, p)) for p in range(PARTITIONS)}

    def close(c):
        c.close()

    admin_result = None
else:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    def consumer(name):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
                      "enable.auto.commit": False, "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                      "heartbeat.interval.ms": 1000})
        c.subscribe([topic])
        return c

    def poll(c):
        out = []
        for m in c.consume(num_messages=100, timeout=0.3):
            if m.error():
                continue
            out.append((m.partition(), m.offset(), m.value().decode()))
        if out:
            c.commit(asynchronous=False)
        return out

    def assignment(c):
        return sorted(p.partition for p in c.assignment())

    def produce(batch):
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
        for part in range(PARTITIONS):
            for i in range(PER_BATCH):
                p.produce(topic, value=f"b{batch}-p{part}-{i}".encode(), partition=part)
        p.flush(30)

    def committed(c):
        got = c.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
        return {str(tp.partition): tp.offset for tp in got}

    def close(c):
        c.close()

    # The AdminClient: create, describe, delete.
    admin = AdminClient({"bootstrap.servers": bootstrap})
    scratch = f"{topic}-admin"
    for f in admin.create_topics([NewTopic(scratch, num_partitions=3, replication_factor=1)]).values():
        f.result(timeout=30)
    described = len(admin.list_topics(topic=scratch, timeout=30).topics[scratch].partitions)
    for f in admin.delete_topics([scratch], operation_timeout=30).values():
        f.result(timeout=30)
    gone = scratch not in admin.list_topics(timeout=30).topics
    admin_result = {"described_partitions": described, "deleted": gone}

produce(1)
c1, c2 = consumer("member-1"), consumer("member-2")
seen = {"member-1": [], "member-2": []}
more = deadline(90)
# Both members share the partitions, and together read the whole first batch.
while more() and not (len(seen["member-1"]) + len(seen["member-2"]) >= PARTITIONS * PER_BATCH
                      and assignment(c1) and assignment(c2)):
    seen["member-1"] += poll(c1)
    seen["member-2"] += poll(c2)
shared = {"member-1": assignment(c1), "member-2": assignment(c2)}
close(c2)  # LeaveGroup: member-1 is given every partition
produce(2)
after = []
more = deadline(90)
while more() and not (len(after) >= PARTITIONS * PER_BATCH and assignment(c1) == list(range(PARTITIONS))):
    after += poll(c1)
result = {"shared": shared, "first": seen, "after": after, "alone": assignment(c1), "committed": committed(c1),
          "admin": admin_result}
close(c1)
print(json.dumps(result))
