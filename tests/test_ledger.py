"""The privacy ledger: over-spend refused, concurrent processes sum exactly,
kill -9 at random moments leaves a consistent database, and pickled
PrivacyBudget copies cannot spend one budget twice."""

from __future__ import annotations

import copy
import math
import os
import pickle
import signal
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

import dpbandits as dp
from dpbandits.errors import PrivacyBudgetError
from dpbandits.privacy import ZCDP, ApproxDP, Guarantee, PrivacyBudget, PureDP

#: A spend whose sums are exact in binary floating point, so totals can be
#: compared with ==.
STEP = 2.0**-6


def _guarantee(model: str, epsilon: float = 1.0, delta: float = 0.0) -> Guarantee:
    return Guarantee(model, epsilon, delta, protects="rewards", basis="test")


# ------------------------------------------------------------ refusals


def test_over_spend_is_refused_naming_the_budget_and_the_spend(tmp_path: Path) -> None:
    with dp.Ledger(tmp_path / "l.db") as ledger:
        ledger.set_budget("clicks", epsilon=1.0, delta=0.0, model="central")
        ledger.spend(PureDP(0.75), dataset="clicks", label="arm means")
        before = ledger.totals("clicks")
        with pytest.raises(PrivacyBudgetError, match=r"'gap estimate'.*'clicks'.*\(1, 0\)-DP budget.*spent so far"):
            ledger.spend(PureDP(0.5), dataset="clicks", label="gap estimate")
        assert ledger.totals("clicks") == before and len(ledger.spends("clicks")) == 1
        ledger.spend(PureDP(0.25), dataset="clicks", label="exactly the rest")
        assert ledger.spent("clicks") == ApproxDP(1.0, 0.0)
        with pytest.raises(PrivacyBudgetError, match="no budget"):
            ledger.spend(PureDP(0.1), dataset="other", label="x")
        with pytest.raises(PrivacyBudgetError, match="non-private"):
            ledger.register(dp.UCB1(k=2, horizon=10), dataset="clicks")
        with pytest.raises(ValueError, match="cannot change"):
            ledger.set_budget("clicks", epsilon=2.0, delta=0.0, model="central")
        ledger.set_budget("clicks", epsilon=1.0, delta=0.0, model="central")  # the same again: a no-op
        with pytest.raises(ValueError, match="`dataset`"):
            ledger.spend(PureDP(0.1), dataset="", label="x")


def test_spends_compose_through_the_accountant(tmp_path: Path) -> None:
    with dp.Ledger(tmp_path / "l.db") as ledger:
        ledger.set_budget("d", epsilon=2.0, delta=1e-6, model=None)
        reference = PrivacyBudget(2.0, 1e-6)
        for i in range(40):  # the rhos add; the ledger gives what the in-process accountant gives
            ledger.spend(ZCDP(0.001), dataset="d", label=f"z{i}")
            reference.spend(ZCDP(0.001), f"z{i}")
        assert ledger.spent("d") == reference.spent and ledger.totals("d")["accounting"] == "zcdp"
        assert ledger.totals("d")["rho"] == pytest.approx(0.04)


def test_trust_models_compose_only_into_a_weaker_budget(tmp_path: Path) -> None:
    budget = PrivacyBudget(5.0, 0.5, model="central")
    budget.spend(_guarantee("local"), "local reports")
    budget.spend(_guarantee("shuffle"), "shuffled")
    budget.spend(_guarantee("central"), "central")
    with pytest.raises(PrivacyBudgetError, match="joint-DP guarantee does not imply central"):
        budget.spend(_guarantee("joint"), "joint")
    assert not budget.can_spend(_guarantee("joint"))
    joint = PrivacyBudget(5.0, 0.5, model="joint")
    for model in ("local", "shuffle", "central", "joint"):
        joint.spend(_guarantee(model), model)
    with pytest.raises(ValueError, match="`budget`"):
        PrivacyBudget(1.0, 0.0, model="global")


def test_a_pickled_budget_cannot_spend_the_budget_twice() -> None:
    budget = PrivacyBudget(epsilon=1.0, delta=0.0)
    budget.spend(PureDP(0.4), "first")
    copies = [pickle.loads(pickle.dumps(budget)), copy.copy(budget), copy.deepcopy(budget)]
    for clone in copies:
        assert clone.read_only and clone.entries == budget.entries and clone.spent == budget.spent
        assert not clone.can_spend(PureDP(0.6))
        with pytest.raises(PrivacyBudgetError, match="pickled or copied snapshot"):
            clone.spend(PureDP(0.6), "elsewhere")
        assert clone.entries == budget.entries
    budget.spend(PureDP(0.6), "the rest")  # the original still spends
    assert budget.spent == ApproxDP(1.0, 0.0) and all(len(c.entries) == 1 for c in copies)  # copies spent nothing
    with pytest.raises(PrivacyBudgetError):
        budget.spend(PureDP(0.01), "over")


def test_the_ledger_budget_snapshot_is_read_only_and_the_ledger_pickles_as_its_path(tmp_path: Path) -> None:
    ledger = dp.Ledger(tmp_path / "l.db")
    ledger.set_budget("d", epsilon=1.0)
    snapshot = ledger.budget("d")
    with pytest.raises(PrivacyBudgetError, match="snapshot"):
        snapshot.spend(PureDP(0.1), "x")
    other = pickle.loads(pickle.dumps(ledger))
    assert other.path == ledger.path and other.datasets() == ("d",)
    other.spend(PureDP(0.5), dataset="d", label="from the copy")
    assert ledger.spent("d").epsilon == 0.5  # one database: the copy cannot spend past it
    with pytest.raises(PrivacyBudgetError):
        ledger.spend(PureDP(0.75), dataset="d", label="over")


# --------------------------------------------------------- concurrency


def _spend_loop(path: str, tries: int, tag: int) -> None:
    ledger = dp.Ledger(path)
    for i in range(tries):
        try:
            ledger.spend(PureDP(STEP), dataset="shared", label=f"p{tag}-{i}")
        except PrivacyBudgetError:
            pass
    ledger.close()


def test_concurrent_spends_from_8_processes_sum_exactly(tmp_path: Path) -> None:
    path = str(tmp_path / "l.db")
    fits = 100
    with dp.Ledger(path) as ledger:
        ledger.set_budget("shared", epsilon=fits * STEP, delta=0.0)
    pids = []
    for tag in range(8):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 0
            try:
                _spend_loop(path, 25, tag)
            except BaseException:
                code = 1
            os._exit(code)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    with dp.Ledger(path) as ledger:
        rows = ledger.spends("shared")
        # 200 tries, exactly the 100 that fit were committed, none twice.
        assert len(rows) == fits and len({r.label for r in rows}) == fits
        assert len({r.label.split("-")[0] for r in rows}) >= 2  # several processes got through
        assert math.fsum(r.epsilon or 0.0 for r in rows) == fits * STEP
        totals = ledger.totals("shared")
        assert totals["spends"] == fits and totals["epsilon"] == fits * STEP
        assert ledger.spent("shared") == ApproxDP(fits * STEP, 0.0)


# ------------------------------------------------------------ kill -9


def _check_consistent(path: str, committed: set[int]) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT id, dataset, kind, label, epsilon, delta, rho, created, pid FROM spends").fetchall()
        ids = {r[0] for r in rows}
        missing = committed - ids
        assert not missing, f"committed spends lost: {sorted(missing)[:5]}"
        for row in rows:  # no partial row
            assert row[1] == "crash" and row[2] in ("spend", "register") and row[3] and row[7] > 0 and row[8] > 0
            assert row[4] in (STEP, 1.0) and row[5] == 0.0 and row[6] is not None
        totals = conn.execute("SELECT spends, epsilon, delta FROM totals WHERE dataset = 'crash'").fetchone()
        assert totals[0] == len(rows)
        assert totals[1] == math.fsum(r[4] for r in rows) and totals[2] == 0.0
        # A registration and its spend are committed together.
        registered = {r[0] for r in conn.execute("SELECT spend_id FROM registrations")}
        assert registered == {r[0] for r in rows if r[2] == "register"}
    finally:
        conn.close()


def test_kill_9_at_random_moments_leaves_a_consistent_ledger(tmp_path: Path) -> None:
    path = str(tmp_path / "l.db")
    with dp.Ledger(path) as ledger:
        ledger.set_budget("crash", epsilon=1e9, delta=0.0)
    rng = np.random.default_rng(37)
    committed: set[int] = set()
    kills = 0
    for round_ in range(110):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child spends until killed
            os.close(read)
            try:
                ledger = dp.Ledger(path)
                i = 0
                while True:
                    if i % 5 == 4:
                        lrn = dp.DPKLUCB(k=2, horizon=100, epsilon=1.0)
                        ledger.register(lrn, dataset="crash")
                        spend_id = ledger.spends("crash")[-1].id
                    else:
                        spend_id = ledger.spend(PureDP(STEP), dataset="crash", label=f"r{round_}-{i}").id
                    os.write(write, spend_id.to_bytes(8, "little"))  # written after its commit
                    i += 1
            finally:
                os._exit(1)
        os.close(write)
        data = os.read(read, 8)  # the child is in its spend loop: kill it at a random moment from here
        time.sleep(float(rng.uniform(0.0, 0.05)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1
        while chunk := os.read(read, 1 << 16):
            data += chunk
        os.close(read)
        committed |= {int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data) - len(data) % 8, 8)}
        _check_consistent(path, committed)
    assert kills >= 100 and len(committed) >= kills  # every child committed before it was killed
    with dp.Ledger(path) as ledger:  # and the ledger still takes spends
        ledger.spend(PureDP(STEP), dataset="crash", label="after")


def test_a_missing_ledger_is_never_recreated_empty(tmp_path: Path) -> None:
    ledger = dp.Ledger(tmp_path / "l.db")
    ledger.set_budget("d", epsilon=3.0)
    lrn = dp.PrivateUCB(k=2, horizon=100, epsilon=1.0)
    ledger.register(lrn, dataset="d")
    ledger.close()
    binding = dict(lrn.lineage["ledger"])
    lrn.__dict__["_ledger"] = {**binding, "path": str(tmp_path / "gone.db")}
    with pytest.raises(PrivacyBudgetError, match="missing"):
        lrn.fork()
    assert not (tmp_path / "gone.db").exists()


def test_a_checkpoint_cannot_point_the_learner_at_another_database(tmp_path: Path) -> None:
    other = tmp_path / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE users(name TEXT)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    with pytest.raises(PrivacyBudgetError, match="not a dpbandits privacy ledger"):
        dp.Ledger(other, create=False)
    with pytest.raises(PrivacyBudgetError, match="not a dpbandits privacy ledger"):
        dp.Ledger(tmp_path / "absent.db", create=False)
    assert other.read_bytes() == before and not (tmp_path / "absent.db").exists()
