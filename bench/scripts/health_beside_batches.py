"""One model's /health while eight 1,000-item batches run on another, through `up`'s app
port (issue 45, section 6): prints each batch's time and /health's median and worst.

    python3 bench/scripts/health_beside_batches.py http://127.0.0.1:3000

Standard library only. Each batch holds 1,000 copies of a 230-atom molecule (23 adamantane
cages in a chain), scored for logp by molprop; /health is asked of iris every 50 ms.
"""

import json
import statistics
import sys
import threading
import time
import urllib.request

APP = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:3000"
CAGES = "C1C2CC3CC1CC(C2)C3" * 23
BODY = json.dumps(
    {"input_type": "text", "data": {"texts": [CAGES] * 1000, "property": "logp"}}
).encode()

latencies = []
done = threading.Event()


def health():
    while not done.is_set():
        started = time.monotonic()
        urllib.request.urlopen(APP + "/models/iris/health").read()
        latencies.append((time.monotonic() - started) * 1000)
        time.sleep(0.05)


def batch():
    started = time.monotonic()
    request = urllib.request.Request(
        APP + "/models/molprop/predict",
        data=BODY,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        reply.read()
        print(f"batch HTTP {reply.status} in {time.monotonic() - started:.2f} s")


poller = threading.Thread(target=health)
poller.start()
batches = [threading.Thread(target=batch) for _ in range(8)]
for b in batches:
    b.start()
for b in batches:
    b.join()
done.set()
poller.join()
print(
    f"/health beside them: {len(latencies)} answers, median {statistics.median(latencies):.1f} ms, "
    f"worst {max(latencies):.1f} ms"
)
