"""The example policy service (examples/policy_service.py) driven over real
HTTP by concurrent clients with delayed, out-of-order feedback, killed with
SIGKILL mid-stream and restarted: no acknowledged reward is lost, the ledger
is intact, and a second restore of one checkpoint for use is refused."""

from __future__ import annotations

import http.client
import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

import dpbandits as dp
from dpbandits.errors import PrivacyBudgetError

SERVICE = Path(__file__).resolve().parent.parent / "examples" / "policy_service.py"
MEANS = (0.7, 0.5, 0.3)


def _start(state: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVICE), str(state), "--port", "0", "--k", "3", "--horizon", "100000",
         "--epsilon", "1.0", "--budget", "2.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("listening on"), (line, proc.stderr.read() if proc.poll() is not None else "")
    port = int(line.split()[2].rsplit(":", 1)[1])
    return proc, port


def _call(conn: http.client.HTTPConnection, method: str, target: str, body: object = None) -> tuple[int, dict]:
    payload = None if body is None else json.dumps(body)
    conn.request(method, target, body=payload, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def _client(port: int, seed: int, acked: list[tuple[int, float]], stop: threading.Event) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    waiting: list[int] = []
    try:
        while not stop.is_set():
            _, decision = _call(conn, "GET", "/select")
            waiting.append(decision["arm"])
            # Feedback comes late and out of order: a random waiting pull.
            if len(waiting) > 20 or rng.random() < 0.3:
                arm = waiting.pop(rng.randrange(len(waiting)))
                reward = float(rng.random() < MEANS[arm])
                status, answer = _call(conn, "POST", "/update", {"arm": arm, "reward": reward})
                assert status == 200 and answer == {"acked": 1}
                acked.append((arm, reward))
    except (ConnectionError, http.client.HTTPException, OSError):
        pass  # the service was killed


def _wal(state: Path) -> list[tuple[int, float]]:
    lines = (state / "rewards.wal").read_text().splitlines()
    return [tuple(json.loads(line)) for line in lines]  # type: ignore[misc]


@pytest.mark.parametrize("seed", [0])
def test_service_survives_sigkill_without_losing_acknowledged_rewards(tmp_path: Path, seed: int) -> None:
    state = tmp_path / "state"
    acked: list[tuple[int, float]] = []
    for run in range(2):
        proc, port = _start(state)
        stop = threading.Event()
        clients = [threading.Thread(target=_client, args=(port, 10 * seed + 4 * run + c, acked, stop))
                   for c in range(4)]
        for c in clients:
            c.start()
        time.sleep(1.5)
        proc.kill()  # SIGKILL mid-stream
        proc.wait()
        stop.set()
        for c in clients:
            c.join()
    assert len(acked) > 100  # the clients did drive the service

    logged = _wal(state)
    assert not Counter(acked) - Counter(logged), "an acknowledged reward is missing from the log"
    proc, port = _start(state)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        _, status = _call(conn, "GET", "/status")
        # Every logged reward reached the restored learner (after the replay).
        assert status["received"] == len(logged)
        status_code, error = _call(conn, "POST", "/update", {"arm": 7, "reward": 0.5})
        assert status_code == 400 and "arms lie in" in error["error"]
    finally:
        proc.kill()
        proc.wait()

    with dp.Ledger(state / "privacy.db") as ledger:
        totals = ledger.totals("service-rewards")
        assert totals["epsilon"] == pytest.approx(1.0)  # registered once; restores of the newest checkpoint are free
        spends = ledger.spends("service-rewards")
        assert [s.kind for s in spends].count("register") == 1
        restored = dp.DPKLUCB.load(state / "learner.ckpt", ledger=ledger)  # the newest checkpoint's first restore
        assert restored.t + int(restored.queue_lengths().sum()) == len(logged)
        with pytest.raises(PrivacyBudgetError):
            dp.DPKLUCB.load(state / "learner.ckpt", ledger=ledger)  # the same state restored for use again
