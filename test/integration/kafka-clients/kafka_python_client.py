"""kafka-python against the Sluice gateway: admin creates a topic, a producer writes records with keys
and headers, a consumer assigned to the partition reads them back. Prints one JSON object."""
import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="sluice-kafka-python")
admin.create_topics([NewTopic(name=topic, num_partitions=2, replication_factor=1)])
listed = sorted(t for t in admin.list_topics() if t == topic)
admin.close()

producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
futures = [
    producer.send(topic, key=f"k{i}".encode(), value=f"python-{i}".encode(), partition=0,
                  headers=[("h", f"{i}".encode())], timestamp_ms=int(time.time() * 1000) + i)
    for i in range(count)
]
offsets = [f.get(timeout=30).offset for f in futures]
producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10000,
                         auto_offset_reset="earliest")
tp = TopicPartition(topic, 0)
consumer.assign([tp])
consumer.seek_to_beginning(tp)
records = []
for message in consumer:
    records.append({"offset": message.offset, "key": message.key.decode(), "value": message.value.decode(),
                    "headers": [[k, v.decode()] for k, v in message.headers], "timestamp": message.timestamp})
    if len(records) == count:
        break
end = consumer.end_offsets([tp])[tp]
consumer.close()
print(json.dumps({"listed": listed, "offsets": offsets, "records": records, "end": end}))
