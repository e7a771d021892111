"""confluent-kafka-python (librdkafka) transactions against the Sluice gateway: a transactional producer
aborts one transaction and commits the next (with offsets of a consumer group, send_offsets_to_transaction),
read_committed and read_uncommitted consumers read the topic, and a second instance with the same
transactional.id fences the first. Prints one JSON object."""
import json
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

bootstrap, topic, group, transactional_id = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def producer():
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                  "transaction.timeout.ms": 60000})
    p.init_transactions(30)
    return p


first = producer()
first.begin_transaction()
first.produce(topic, value=b"aborted-0", partition=0)
first.produce(topic, value=b"aborted-1", partition=1)
first.flush(30)
first.abort_transaction(30)
first.begin_transaction()
first.produce(topic, value=b"committed-0", partition=0)
first.produce(topic, value=b"committed-1", partition=1)
group_consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
first.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], group_consumer.consumer_group_metadata(), 30)
first.commit_transaction(30)
first.begin_transaction()
first.produce(topic, value=b"last", partition=0)
first.commit_transaction(30)
committed_offsets = [tp.offset for tp in group_consumer.committed([TopicPartition(topic, 0)], 30)]
group_consumer.close()

# A second instance with the same transactional.id fences the first.
first.begin_transaction()
first.produce(topic, value=b"zombie", partition=0)
first.flush(30)
second = producer()
zombie_error = None
try:
    first.produce(topic, value=b"zombie-after", partition=0)
    first.commit_transaction(30)
except KafkaException as e:
    zombie_error = e.args[0].name()
second.begin_transaction()
second.produce(topic, value=b"fresh", partition=1)
second.commit_transaction(30)


def read(isolation):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{isolation}", "enable.auto.commit": False,
                  "isolation.level": isolation})
    c.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    values = []
    idle = 0
    while idle < 3:
        m = c.poll(2)
        if m is None:
            idle += 1
            continue
        if m.error():
            continue
        values.append(m.value().decode())
    c.close()
    return sorted(values)


print(json.dumps({"readCommitted": read("read_committed"), "readUncommitted": read("read_uncommitted"),
                  "committedOffsets": committed_offsets, "zombieError": zombie_error}))
