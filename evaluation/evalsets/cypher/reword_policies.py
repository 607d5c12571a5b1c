"""The rewording second reader's policies measured in one pass (issue 44, docs/query.md).

Every question is read by the rules; each abstained one gets the model's rewordings once
(``kg/cypher/reword.py``), anchor-checked and read by the rules; then every policy is
decided on the same rewordings, so the model runs once per question for all of them.

    LIVEKG_LLM__BASE_URL=http://127.0.0.1:8091/v1 python -m \
        evaluation.evalsets.cypher.reword_policies F.jsonl --graph sample --out F.reword.jsonl

``--cache FILE``: the model's rewordings by question (JSONL, read and appended), so a
rerun with other policies or anchor rules costs no model time. Prints one JSON object:
per policy accuracy, answered, answered wrong (and share), plus "rules" (no rewording),
the model's seconds and how many rewordings were kept.

Each policy is decided on three sets of tries (``VARIANTS``): ``P`` the first rewording
alone as before this pass (a deletion may pair), ``P|del`` the first rewording with the
deletion rule (``only_deletes``: a rewording that only drops words cannot pair), and
``P|del|again`` with a second rewording ("another wording", ``reword_again``) asked as the
product asks it under ``pair`` (``--again``; ``worth_again``: the first decided nothing and
a reading is there to pair with). So ``pair|del|again`` is the product's; ``agree`` and
``confident`` with ``|again`` only see the second wordings ``pair`` asked for.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

from core.settings import Settings
from evaluation.scorers.cypher import read_items, rows_match
from evaluation.scorers.cypher_fixture import load_graph, load_sample_day
from kg.cypher import CypherQA
from kg.cypher.coverage import same_rows
from kg.cypher.hybrid import RetrievalAnswerer
from kg.cypher.reword import (
    POLICIES,
    LLMReworder,
    Try,
    clean,
    decide,
    read_rewordings,
    rows_of,
    worth_again,
)
from kg.graph.store import open_store
from kg.graph.store.falkor import FalkorStore
from kg.models.embed import make_embedder
from kg.models.llm import make_llm_client
from ops.runtime import services

_ZH = re.compile(r"[\u3400-\u9fff]")
PAIR_FLOORS = (0.3, 0.4, 0.5, 0.6, 0.7)
# variants: agree, else a confident rewording; pair with other floors
EXTRA = ("confident_or_agree", *(f"pair@{f}" for f in PAIR_FLOORS))
VARIANTS = ("", "|del", "|del|again")  # see the module's text


def variant_tries(tries: list[Try], variant: str) -> list[Try]:
    """The tries a variant decides on."""
    out = [t for t in tries if t.round == 1 or "again" in variant]
    if "del" not in variant:  # as before this pass: a deletion may pair
        out = [dataclasses.replace(t, deletion=False) for t in out]
    return out


def _append(path: Path, rec: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")


class Cached:
    """The model's rewordings, read from / appended to a JSONL cache."""

    def __init__(self, inner: LLMReworder, path: Path | None) -> None:
        self.inner, self.path = inner, path
        self.seen: dict[str, list[str]] = {}
        self.again: dict[str, list[str]] = {}
        self.model_s = 0.0
        self.calls = 0
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                d = json.loads(line)
                if "again" in d:
                    self.again[d["question"]] = d["again"]
                else:
                    self.seen[d["question"]] = d["rewordings"]

    async def _record(
        self, question: str, store: dict[str, list[str]], key: str, call: Any
    ) -> list[str]:
        """Await the model's ``call`` for ``question``: timed, counted, kept in ``store`` and
        appended to the cache file under ``key``."""
        t0 = time.perf_counter()
        out: list[str] = await call
        self.model_s += time.perf_counter() - t0
        self.calls += 1
        store[question] = out
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"question": question, key: out}, ensure_ascii=False))
                f.write("\n")
        return out

    async def reword(self, question: str) -> list[str]:
        if question in self.seen:  # cleaned again: the rules of ``clean`` may have changed
            return clean(question, self.seen[question])
        return await self._record(question, self.seen, "rewordings", self.inner.reword(question))

    async def reword_again(self, question: str, before: list[str]) -> list[str]:
        if question in self.again:
            return clean(question, self.again[question])
        call = self.inner.reword_again(question, before)
        return await self._record(question, self.again, "again", call)


async def run(
    args: argparse.Namespace, s: Settings, ep: Any, out_lines: list[dict[str, Any]]
) -> dict[str, Any]:
    items = read_items(Path(args.questions))
    if True:
        name = f"livekg_reword_{uuid.uuid4().hex[:8]}"
        store = open_store(s.with_overrides(graph={"graph_name": name}), ep.falkordb_url)
        llm = make_llm_client(s, args.llm_url)
        try:
            await (load_sample_day if args.graph == "sample" else load_graph)(store)
            embedder = None
            if s.query.rank_with_embeddings:
                embedder = await asyncio.to_thread(make_embedder, s.embed)
            lexicon = await CypherQA.load_lexicon(store)
            hybrid = RetrievalAnswerer(store, embedder) if embedder is not None else None
            qa = CypherQA(store, lexicon, embedder=embedder, hybrid=hybrid)
            inner = LLMReworder(llm, zh_grammar=args.zh_grammar)
            reworder = Cached(inner, Path(args.cache) if args.cache else None)
            if args.zh_only:  # the Chinese questions alone (a probe of the Chinese path)
                items = [it for it in items if _ZH.search(it.question)]
            for it in items[: args.limit or None]:
                first = await qa.ask(it.question, revise=False, now=it.now, reword=False)
                ok0 = rows_match(it.expected, rows_of(first))
                rec: dict[str, Any] = {
                    "question": it.question,
                    "status": first.status,
                    "rows_ok": ok0,
                    "confidence": first.interpretation.confidence if first.interpretation else 0.0,
                    "tries": [],
                    "decisions": {},
                }
                if first.status == "abstained" and first.time is not None:
                    got = await read_rewordings(
                        qa, it.question, reworder, now=first.time.now, as_of=None,
                        budget_s=args.budget_s,
                        again=partial(worth_again, "pair", first) if args.again else None,
                    )  # fmt: skip
                    rec["model_ms"] = got.model_ms
                    for t in got.tries:
                        r = t.result
                        rec["tries"].append(
                            {
                                "text": t.text,
                                "round": t.round,
                                "kept": t.kept,
                                "why": t.why,
                                "deletion": t.deletion,
                                "status": r.status if r else None,
                                "confidence": r.interpretation.confidence
                                if r and r.interpretation
                                else None,
                                "rows_ok": rows_match(it.expected, t.rows()) if r else False,
                                "same_as_first": bool(r) and same_rows(rows_of(first), t.rows()),
                            }
                        )

                    def judge(c: Try | None, expected: Any = it.expected) -> bool | None:
                        return None if c is None else rows_match(expected, c.rows())

                    for v in VARIANTS:
                        tries = variant_tries(got.tries, v)
                        for p in POLICIES:
                            rec["decisions"][p + v] = judge(decide(p, first, tries))
                        for fl in PAIR_FLOORS:
                            rec["decisions"][f"pair@{fl}{v}"] = judge(
                                decide("pair", first, tries, floor=fl)
                            )
                        c = decide("agree", first, tries) or decide("confident", first, tries)
                        rec["decisions"]["confident_or_agree" + v] = judge(c)
                out_lines.append(rec)
                if args.out:  # as it goes: a long run can be summarised before it ends
                    _append(Path(args.out), rec)
                print(json.dumps(rec, ensure_ascii=False), flush=True) if args.verbose else None
        finally:
            await llm.aclose()
            if isinstance(store, FalkorStore):
                await store.delete_graph()
            await store.close()
    return summarize(out_lines, reworder.model_s, reworder.calls)


def summarize(lines: list[dict[str, Any]], model_s: float, calls: int) -> dict[str, Any]:
    n = len(lines)
    res: dict[str, Any] = {"n": n, "model_calls": calls, "model_s": round(model_s, 1)}
    abst = [r for r in lines if r["status"] == "abstained"]
    res["abstained_by_rules"] = len(abst)
    res["abstained_rows_right"] = sum(r["rows_ok"] for r in abst)
    res["rewordings"] = sum(len(r["tries"]) for r in abst)
    res["kept"] = sum(t["kept"] for r in abst for t in r["tries"])
    names = [p + v for v in VARIANTS for p in (*POLICIES, *EXTRA)]
    for policy in ("rules", *names):
        right = answered = 0
        for r in lines:
            if r["status"] == "answered":
                answered += 1
                right += r["rows_ok"]
            elif policy != "rules" and r["decisions"].get(policy) is not None:
                answered += 1
                right += r["decisions"][policy]
        wrong = answered - right
        res[policy] = {
            "accuracy": round(right / n, 4) if n else 0.0,
            "answered": answered,
            "answered_wrong": wrong,
            "answered_wrong_share": round(wrong / n, 4) if n else 0.0,
        }
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions")
    ap.add_argument("--graph", default="sample", choices=("sample", "fixture"))
    ap.add_argument("--out")
    ap.add_argument("--cache")
    ap.add_argument("--llm-url", default=None)
    ap.add_argument("--budget-s", type=float, default=60.0)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--again", action="store_true", help="a second rewording for each")
    ap.add_argument("--zh-grammar", action="store_true", help="Chinese rewordings by grammar")
    ap.add_argument("--zh-only", action="store_true", help="only the Chinese questions")
    ap.add_argument("--summarize", action="store_true", help="QUESTIONS is an --out file")
    args = ap.parse_args()
    if args.summarize:  # the policies of an --out file again, no model and no graph
        lines = [json.loads(x) for x in Path(args.questions).read_text("utf-8").splitlines()]
        print(json.dumps(summarize(lines, 0.0, 0), ensure_ascii=False, indent=1))
        return
    out_lines: list[dict[str, Any]] = []
    if args.out:
        Path(args.out).write_text("", encoding="utf-8")
    with services(Settings(), llm=False) as (s, ep):
        res = asyncio.run(run(args, s, ep, out_lines))
    print(json.dumps(res, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
