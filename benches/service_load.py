"""Load on the example policy service: select requests per second with
delayed updates interleaved (one update, for a pull selected earlier, per
``--ratio`` selects), from several client processes on keep-alive
connections.

    python benches/service_load.py [--clients 4] [--seconds 10] [--ratio 10]

Prints the select and update rates, with the service and the clients on the
same machine (the clients' CPU counts against the service's).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVICE = Path(__file__).resolve().parent.parent / "examples" / "policy_service.py"


def _client(port: int, seconds: float, ratio: int, seed: int, out: mp.Queue) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    selects = updates = 0
    waiting: list[int] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        conn.request("GET", "/select")
        waiting.append(json.loads(conn.getresponse().read())["arm"])
        selects += 1
        if selects % ratio == 0:
            arm = waiting.pop(rng.randrange(len(waiting)))
            body = json.dumps({"arm": arm, "reward": float(rng.random() < 0.5)})
            conn.request("POST", "/update", body=body, headers={"Content-Type": "application/json"})
            conn.getresponse().read()
            updates += 1
    out.put((selects, updates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--ratio", type=int, default=10, help="selects per update")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        proc = subprocess.Popen([sys.executable, str(SERVICE), state, "--port", "0"], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[2].rsplit(":", 1)[1])
        try:
            out: mp.Queue = mp.Queue()
            clients = [mp.Process(target=_client, args=(port, args.seconds, args.ratio, c, out))
                       for c in range(args.clients)]
            for c in clients:
                c.start()
            totals = [out.get() for _ in clients]
            for c in clients:
                c.join()
        finally:
            proc.kill()
            proc.wait()
    selects = sum(s for s, _ in totals)
    updates = sum(u for _, u in totals)
    print(f"{args.clients} clients, {args.seconds:.0f} s: {selects / args.seconds:,.0f} select requests/s, "
          f"{updates / args.seconds:,.0f} updates/s (acknowledged after fsync)")


if __name__ == "__main__":
    main()
