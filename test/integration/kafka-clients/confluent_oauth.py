"""confluent-kafka-python (librdkafka) through the Sluice Kafka gateway with SASL/OAUTHBEARER: oauth_cb
runs `sluice gateway token` (signing with the AWS credentials in the environment). Produces three
records to orders (allowed) and one to bobs (refused). Prints one JSON object."""
import json
import subprocess
import sys

from confluent_kafka import Producer

bootstrap, url = sys.argv[1], sys.argv[2]


def token(_config):
    out = subprocess.run(["node", "bin/sluice.js", "gateway", "token", "--url", url, "--region", "us-east-1",
                          "--json"], check=True, capture_output=True, text=True).stdout
    answer = json.loads(out)
    return answer["token"], answer["expiresAt"] / 1000


def produce(topic, values):
    outcomes = []
    producer = Producer({"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanisms": "OAUTHBEARER", "oauth_cb": token, "enable.idempotence": False,
                         "acks": "all", "message.timeout.ms": 20000})
    for value in values:
        producer.produce(topic, value=value.encode(), partition=1 if topic == "orders" else 0,
                         on_delivery=lambda err, msg: outcomes.append(str(err) if err else None))
    producer.flush(30)
    return outcomes


delivered = produce("orders", [f"librdkafka {i}" for i in range(3)])
refused = produce("bobs", ["not alice"])
print(json.dumps({"delivered": delivered, "refused": refused}))
