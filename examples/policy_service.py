"""A private experiment-allocation service: a K-armed private learner behind HTTP.

    python examples/policy_service.py STATE_DIR [--port 8000] [--k 5]
        [--horizon 1000000] [--epsilon 1.0] [--budget 2.0]

Endpoints (JSON over HTTP/1.1, keep-alive):

- ``GET /select``: an arm, served from the learner's current policy
  (``learner.policy()``, built only from released values: serving it is
  post-processing and costs no privacy). ``{"arm": 2, "version": 17}``.
- ``POST /update`` with ``{"arm": 2, "reward": 1.0}`` or a list of such
  objects: delayed feedback, in any order. The answer ``{"acked": n}`` comes
  after the rewards are durable (appended to ``rewards.wal`` and fsynced, in
  group commits) and applied to the learner.
- ``GET /status``: rounds, rewards received, policy version, checkpoint id,
  the privacy spent on the ledger.

Durability and privacy (``STATE_DIR`` holds all of it):

- ``learner.ckpt``: the learner in write-ahead autosave mode
  (:meth:`dpbandits.DPKLUCB.autosave`): every new release is in the
  checkpoint before a decision reveals it.
- ``rewards.wal``: every acknowledged reward, one JSON line each, fsynced
  before the acknowledgement. On a restart the learner is restored from
  the checkpoint for use (re-keyed noise; the ledger records the restore)
  and the rewards the checkpoint had not yet received are applied again,
  so no acknowledged reward is lost.
- ``privacy.db``: a :class:`dpbandits.Ledger` with the data set
  ``service-rewards``. The learner's guarantee is charged once when it is
  built; a second restore of the same checkpoint for use is refused by the
  ledger.

Standard library only (asyncio streams); one process, one event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import dpbandits as dp

DATASET = "service-rewards"


def _received(learner: Any) -> int:
    """Rewards the learner holds: fed to its algorithm, or queued for it."""
    return int(learner.t) + int(learner.queue_lengths().sum())


class PolicyService:
    """The learner, its policy, the reward log and the ledger of one state directory."""

    def __init__(self, state: Path, k: int, horizon: int, epsilon: float, budget: float) -> None:
        state.mkdir(parents=True, exist_ok=True)
        self.ckpt = state / "learner.ckpt"
        self.wal_path = state / "rewards.wal"
        self.ledger = dp.Ledger(state / "privacy.db")
        if DATASET not in self.ledger.datasets():
            self.ledger.set_budget(DATASET, epsilon=budget, delta=0.0, model="central")
        if self.ckpt.exists():
            # A restore for use: future noise re-keyed from the operating
            # system; the ledger refuses a second restore of this checkpoint.
            learner = dp.DPKLUCB.load(self.ckpt, ledger=self.ledger)
        else:
            learner = dp.DPKLUCB(k, horizon, epsilon)
            self.ledger.register(learner, dataset=DATASET, label="policy service")
        self.k = int(learner.k)
        self.learner = learner.autosave(self.ckpt)
        self.replayed = self._replay_log()
        self.wal = open(self.wal_path, "a", encoding="utf-8")
        self.policy = self.learner.policy()
        self.version = self.learner.policy_version
        self.select_response = _response("200 OK", self.select())
        self.pending: list[tuple[list[tuple[int, float]], asyncio.Future[int]]] = []
        self.wake = asyncio.Event()

    def _replay_log(self) -> int:
        """Applies the logged rewards the restored learner has not received."""
        if not self.wal_path.exists():
            return 0
        data = self.wal_path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            # A record cut by a crash was never acknowledged: drop it, so
            # that the next record starts on a line of its own.
            with open(self.wal_path, "r+b") as f:
                f.truncate(len(complete))
                os.fsync(f.fileno())
        records = [json.loads(line) for line in complete.decode("utf-8").splitlines()]
        done = _received(self.learner)
        for arm, reward in records[done:]:
            self.learner.update(arm, reward)
        self.learner.sync()
        return len(records) - done

    def select(self) -> dict[str, int]:
        return {"arm": int(self.policy.select()), "version": self.version}

    def status(self) -> dict[str, Any]:
        return {
            "t": self.learner.t,
            "received": _received(self.learner),
            "version": self.version,
            "checkpoint_id": self.learner.checkpoint_id,
            "replayed": self.replayed,
            "spent_epsilon": self.ledger.totals(DATASET)["epsilon"],
        }

    async def update(self, items: list[tuple[int, float]]) -> int:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.pending.append((items, future))
        self.wake.set()
        return await future

    async def committer(self) -> None:
        """Group commit: log every waiting update, fsync once, apply, acknowledge."""
        loop = asyncio.get_running_loop()
        while True:
            await self.wake.wait()
            self.wake.clear()
            batch, self.pending = self.pending, []
            if not batch:
                continue
            valid: list[tuple[list[tuple[int, float]], asyncio.Future[int]]] = []
            for items, future in batch:
                bad = [(arm, r) for arm, r in items if not (0 <= arm < self.k and 0.0 <= r <= 1.0)]
                if bad:
                    # Refused before the log: a logged reward is always one the learner takes.
                    future.set_exception(ValueError(f"arms lie in [0, {self.k}) and rewards in [0, 1], got {bad[0]}"))
                else:
                    valid.append((items, future))
            lines = "".join(json.dumps([arm, reward]) + "\n" for items, _ in valid for arm, reward in items)
            await loop.run_in_executor(None, self._append, lines)
            await loop.run_in_executor(None, self._apply, [pair for items, _ in valid for pair in items])
            for items, future in valid:
                future.set_result(len(items))

    def _append(self, lines: str) -> None:
        self.wal.write(lines)
        self.wal.flush()
        os.fsync(self.wal.fileno())

    def _apply(self, pairs: list[tuple[int, float]]) -> None:
        if not pairs:
            return
        self.learner.update_many([arm for arm, _ in pairs], [reward for _, reward in pairs])
        if self.learner.policy_version != self.version:
            # The autosave wrapper made the new release durable first.
            self.policy = self.learner.policy()
            self.version = self.learner.policy_version
            # A K-armed policy is one arm per version: its answer is
            # built once per version, not per request.
            self.select_response = _response("200 OK", self.select())


def _feedback(body: Any) -> list[tuple[int, float]]:
    items = body if isinstance(body, list) else [body]
    out = []
    for item in items:
        if not isinstance(item, dict) or set(item) != {"arm", "reward"}:
            raise ValueError('each update is {"arm": int, "reward": float}')
        arm, reward = item["arm"], item["reward"]
        if type(arm) is not int or type(reward) not in (int, float):
            raise ValueError('each update is {"arm": int, "reward": float}')
        out.append((arm, float(reward)))
    return out


def _response(status: str, payload: Any) -> bytes:
    body = json.dumps(payload).encode()
    return f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


async def _respond(writer: asyncio.StreamWriter, status: str, payload: Any) -> None:
    writer.write(_response(status, payload))
    await writer.drain()


#: Above this many buffered bytes a response waits for the client to read.
_HIGH_WATER = 1 << 16


async def _serve_client(service: PolicyService, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /select ") and b"ontent-" not in head:
                # The hot path: a select without a body, answered with the
                # current policy's prebuilt response.
                writer.write(service.select_response)
                if writer.transport.get_write_buffer_size() > _HIGH_WATER:
                    await writer.drain()
                continue
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, _ = request_line.split(" ", 2)
            length = 0
            for line in header_lines:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length > 1 << 20:
                await _respond(writer, "413 Payload Too Large", {"error": "body over 1 MiB"})
                break
            body = await reader.readexactly(length) if length else b""
            if method == "GET" and target == "/select":
                await _respond(writer, "200 OK", service.select())
            elif method == "POST" and target == "/update":
                try:
                    acked = await service.update(_feedback(json.loads(body)))
                except (TypeError, ValueError) as exc:
                    await _respond(writer, "400 Bad Request", {"error": str(exc)})
                else:
                    await _respond(writer, "200 OK", {"acked": acked})
            elif method == "GET" and target == "/status":
                await _respond(writer, "200 OK", service.status())
            else:
                await _respond(writer, "404 Not Found", {"error": f"no {method} {target}"})
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        writer.close()


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("state", type=Path, help="directory for the checkpoint, the reward log and the ledger")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--k", type=int, default=5, help="number of arms")
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--epsilon", type=float, default=1.0, help="the learner's epsilon (pure DP)")
    parser.add_argument("--budget", type=float, default=2.0, help="the data set's epsilon budget on the ledger")
    args = parser.parse_args(argv)
    service = PolicyService(args.state, args.k, args.horizon, args.epsilon, args.budget)
    server = await asyncio.start_server(lambda r, w: _serve_client(service, r, w), "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on 127.0.0.1:{port} (replayed {service.replayed} logged rewards)", flush=True)
    committer = asyncio.create_task(service.committer())
    async with server:
        await server.serve_forever()
    committer.cancel()


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1:]))
    except KeyboardInterrupt:
        pass
