"""The benches' shared rounds (evaluation/bench/rounds.py): the order alternates, every round is
kept, medians leave out rounds without a figure."""

import asyncio

import pytest

from evaluation.bench.rounds import alternate, first_of_round, medians


def test_the_order_alternates_from_either_end() -> None:
    assert [first_of_round(i, 3) for i in range(3)] == [True, False, True]
    assert [first_of_round(i, 4) for i in range(4)] == [True, False, True, False]
    # anchored at the end: the last round runs the first-named path first
    assert [first_of_round(i, 4, "end") for i in range(4)] == [False, True, False, True]


def test_alternate_runs_each_pass_once_a_round_in_the_alternating_order() -> None:
    calls: list[tuple[str, int]] = []

    def path(name: str):
        async def run(i: int) -> dict:
            calls.append((name, i))
            return {"seconds": float(i + 1), "who": name}

        return run

    rows = asyncio.run(alternate({"sink": path("sink"), "reference": path("ref")}, 3))
    assert calls == [("sink", 0), ("ref", 0), ("ref", 1), ("sink", 1), ("sink", 2), ("ref", 2)]
    assert [r["first"] for r in rows] == ["sink", "reference", "sink"]
    assert rows[1]["sink"] == {"seconds": 2.0, "who": "sink"}
    with pytest.raises(ValueError):
        asyncio.run(alternate({"only": path("x")}, 1))


def test_medians_of_named_fields_leave_out_rounds_without_a_number() -> None:
    rows = [{"ratio": 0.7, "s": 2}, {"ratio": None, "s": 4}, {"ratio": 0.9, "s": 9}]
    assert medians(rows, ("ratio", "s", "missing")) == {"ratio": 0.8, "s": 4.0, "missing": None}
    assert medians([{"s": 1.23456}], ("s",), digits=2) == {"s": 1.23}
