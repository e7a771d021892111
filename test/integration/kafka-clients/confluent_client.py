"""confluent-kafka-python (librdkafka) against the Sluice gateway: the admin client creates a topic and
describes its configs, an idempotent producer writes records with every codec, a consumer assigned to
the partition reads them back. Prints one JSON object."""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({"bootstrap.servers": bootstrap})
for future in admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1,
                                            config={"retention.ms": "3600000"})]).values():
    future.result(timeout=30)
described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
configs = {k: v.value for res in described.values() for k, v in res.result(timeout=30).items()}
metadata = admin.list_topics(topic=topic, timeout=30)
partitions = len(metadata.topics[topic].partitions)

delivered = []
for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "compression.codec": codec,
                         "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, key=f"{codec}-{i}".encode(), value=f"librdkafka-{codec}-{i}".encode(), partition=1,
                         headers=[("codec", codec.encode())], timestamp=int(time.time() * 1000) + i,
                         on_delivery=lambda err, msg: delivered.append(
                             {"error": str(err) if err else None, "offset": msg.offset()}))
    producer.flush(30)

consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "sluice-unused", "enable.auto.commit": False,
                     "auto.offset.reset": "earliest"})
consumer.assign([TopicPartition(topic, 1, 0)])
records = []
while len(records) < 5 * count:
    message = consumer.poll(10)
    if message is None:
        break
    if message.error():
        records.append({"error": str(message.error())})
        continue
    records.append({"offset": message.offset(), "key": message.key().decode(), "value": message.value().decode(),
                    "headers": [[k, v.decode()] for k, v in message.headers() or []],
                    "timestamp": message.timestamp()[1]})
low, high = consumer.get_watermark_offsets(TopicPartition(topic, 1), timeout=10)
consumer.close()
print(json.dumps({"partitions": partitions, "retention": configs.get("retention.ms"), "delivered": delivered,
                  "records": records, "low": low, "high": high}))
