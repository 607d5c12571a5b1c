"""Builds questions.jsonl: the NL -> Cypher question suite (synthetic, written for livekg).

Expected rows are computed here in plain Python from the bundled universe
(kg/data/universe.json) and the synthetic observations fixture (observations.jsonl),
never by running livekg's own Cypher, so the suite checks the query path end to end.
Run: ``python -m kg.cypher.evalsets.build_suite`` (rewrites questions.jsonl).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
UNIVERSE = json.loads((HERE.parents[1] / "data" / "universe.json").read_text())
OBS = [json.loads(line) for line in (HERE / "observations.jsonl").read_text().splitlines()]
NOW = "2026-11-21T00:00:00Z"  # the suite's "now" (relative time expressions)

E = {e["id"]: e for e in UNIVERSE["entities"]}
R = UNIVERSE["relations"]


def ids(xs: Any) -> list[dict[str, Any]]:
    return [{"id": x} for x in sorted(set(xs))]


def typ(t: str) -> list[str]:
    sub = {"Person": ("Executive", "FundManager", "Person")}
    return [e["id"] for e in UNIVERSE["entities"] if e["type"] in sub.get(t, (t,))]


def rel(head: str | None = None, r: str | None = None, tail: str | None = None) -> list[dict]:
    return [
        x
        for x in R
        if (head is None or x["head"] == head)
        and (r is None or x["relation"] == r)
        and (tail is None or x["tail"] == tail)
    ]


def prop(eid: str, p: str) -> Any:
    e = E[eid]
    return e.get(p, e.get("properties", {}).get(p))


def ms(s: str) -> int:
    return int(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)


def series(iid: str, start: str | None = None, end: str | None = None) -> list[tuple[int, float]]:
    pts = [(ms(o["event_time"]), o["value"]) for o in OBS if o["indicator_id"] == iid]
    if start:
        pts = [p for p in pts if p[0] >= ms(start)]
    if end:
        pts = [p for p in pts if p[0] < ms(end)]
    return sorted(pts)


def day(iid: str, d: str) -> list[float]:
    return [v for _, v in series(iid, f"{d}T00:00:00Z", _next(d))]


def _next(d: str) -> str:
    x = datetime.fromisoformat(d).replace(tzinfo=UTC)
    return datetime.fromtimestamp(x.timestamp() + 86400, UTC).strftime("%Y-%m-%dT00:00:00Z")


def val(x: float) -> list[dict[str, Any]]:
    return [{"value": round(x, 6)}]


def cnt(n: int) -> list[dict[str, Any]]:
    return [{"count": n}]


def latest(iid: str) -> float:
    return series(iid)[-1][1]


companies = set(typ("Company"))
Q: list[tuple[str, str, str, Callable[[], list[dict[str, Any]]]]] = []


def q(type_: str, en: str, zh: str | None, fn: Callable[[], list[dict[str, Any]]]) -> None:
    Q.append((type_, en, "en", fn))
    if zh:
        Q.append((type_, zh, "zh", fn))


nasdaq = [c for c in companies if prop(c, "exchange") == "NASDAQ"]
# -- AF: attribute filtering on the static universe --------------------------------------
q("AF", "Which companies are listed on NASDAQ?", "哪些公司在纳斯达克上市？", lambda: ids(nasdaq))
q(
    "AF",
    "Which companies trade on the Shenzhen Stock Exchange?",
    "深交所上市的公司有哪些？",
    lambda: ids(c for c in companies if prop(c, "exchange") == "SZSE"),
)
q(
    "AF",
    "Which funds are ETFs?",
    "哪些基金是ETF？",
    lambda: ids(f for f in typ("Fund") if prop(f, "fund_type") == "etf"),
)
q(
    "AF",
    "What is the ticker of Kweichow Moutai?",
    "贵州茅台的股票代码是什么？",
    lambda: [{"ticker": "600519.SH"}],
)
q(
    "AF",
    "What is the tenor of the China 30-year government bond?",
    "30年期国债的期限是几年？",
    lambda: [{"tenor_years": 30.0}],
)
q(
    "AF",
    "Which indicators are in the money market category?",
    "哪些指标属于货币市场类别？",
    lambda: ids(i for i in typ("Indicator") if prop(i, "category") == "money_market"),
)
q(
    "AF",
    "Which bonds are denominated in US dollars?",
    "哪些债券以美元计价？",
    lambda: ids(b for b in typ("Bond") if prop(b, "currency") == "USD"),
)
q(
    "AF",
    "What is the Chinese name of Nvidia?",
    "NVIDIA的中文名是什么？",
    lambda: [{"name_zh": "英伟达"}],
)
q(
    "AF",
    "Which indicators are published monthly?",
    "哪些指标是月度的？",
    lambda: ids(i for i in typ("Indicator") if prop(i, "frequency") == "monthly"),
)
q(
    "AF",
    "What is the unit of the China PMI?",
    "中国制造业采购经理指数的单位是什么？",
    lambda: [{"unit": "index"}],
)
q(
    "AF",
    "Which bonds have a tenor longer than 5 years?",
    "期限超过5年的债券有哪些？",
    lambda: ids(b for b in typ("Bond") if prop(b, "tenor_years") > 5),
)
q(
    "AF",
    "Which companies are listed on the New York Stock Exchange?",
    "哪些公司在纽交所上市？",
    lambda: ids(c for c in companies if prop(c, "exchange") == "NYSE"),
)
q("AF", "What is the role of Jerome Powell?", None, lambda: [{"role": "Chair"}])
q(
    "AF",
    "Which indicators have a latest value above 4%?",
    "最新值高于4%的指标有哪些？",
    lambda: ids(i for i in {o["indicator_id"] for o in OBS} if latest(i) > 4),
)

# -- AC: attribute calculation (indicator observations, counts) ------------------------------
q(
    "AC",
    "What is the latest value of the US 10-year Treasury yield?",
    "美国10年期国债收益率最新是多少？",
    lambda: val(latest("US10Y")),
)
q(
    "AC",
    "What was the highest China 10-year yield on 2026-11-18?",
    "2026年11月18日中国10年期国债收益率最高是多少？",
    lambda: val(max(day("CN10Y", "2026-11-18"))),
)
q(
    "AC",
    "What was the lowest DR007 on 2026-11-17?",
    "2026-11-17 DR007的最低值是多少？",
    lambda: val(min(day("DR007", "2026-11-17"))),
)
q(
    "AC",
    "What was the average US 2-year yield on 2026-11-19?",
    "2026年11月19日美国2年期国债收益率平均是多少？",
    lambda: val(sum(day("US2Y", "2026-11-19")) / len(day("US2Y", "2026-11-19"))),
)
q(
    "AC",
    "How many observations of the US 10-year yield are there?",
    "美国10年期国债收益率有多少条观测？",
    lambda: cnt(len(series("US10Y"))),
)
q(
    "AC",
    "How much did the China 10-year yield change between 2026-11-16 and 2026-11-20?",
    "2026-11-16至2026-11-20中国10年期国债收益率变化了多少？",
    lambda: val(series("CN10Y")[-1][1] - series("CN10Y")[0][1]),
)
q(
    "AC",
    "What is the latest China CPI?",
    "最新的居民消费价格指数是多少？",
    lambda: val(latest("CN_CPI")),
)
q(
    "AC",
    "What is the highest China PMI on record?",
    "中国制造业PMI的最高值是多少？",
    lambda: val(max(v for _, v in series("CN_PMI"))),
)
q(
    "AC",
    "What is the average M2 growth?",
    "M2同比增速的平均值是多少？",
    lambda: val(sum(v for _, v in series("CN_M2")) / len(series("CN_M2"))),
)
q("AC", "How many companies are there?", "一共有多少家公司？", lambda: cnt(len(companies)))
q("AC", "How many funds are in the graph?", "图谱里有几只基金？", lambda: cnt(len(typ("Fund"))))
q(
    "AC",
    "What is the longest bond tenor?",
    "债券的最长期限是多少？",
    lambda: val(max(prop(b, "tenor_years") for b in typ("Bond"))),
)
q(
    "AC",
    "What was the opening value of the US 10-year yield on 2026-11-20?",
    None,
    lambda: val(day("US10Y", "2026-11-20")[0]),
)
q("AC", "How many indicators are there?", "一共有多少个指标？", lambda: cnt(len(typ("Indicator"))))

# -- AF+AC -----------------------------------------------------------------------------------
q(
    "AF+AC",
    "How many companies are listed on NASDAQ?",
    "纳斯达克上市的公司有几家？",
    lambda: cnt(len(nasdaq)),
)
q(
    "AF+AC",
    "How many ETFs are there?",
    "有几只ETF基金？",
    lambda: cnt(sum(prop(f, "fund_type") == "etf" for f in typ("Fund"))),
)
q(
    "AF+AC",
    "How many times was the US 10-year yield above 4.2% on 2026-11-18?",
    "2026年11月18日美国10年期国债收益率有几次高于4.2%？",
    lambda: cnt(sum(v > 4.2 for v in day("US10Y", "2026-11-18"))),
)
q(
    "AF+AC",
    "How many US 2-year yield observations exceeded 3.65%?",
    None,
    lambda: cnt(sum(v > 3.65 for _, v in series("US2Y"))),
)
q(
    "AF+AC",
    "What is the average tenor of bonds denominated in yuan?",
    "人民币债券的平均期限是多少？",
    lambda: val(
        sum(prop(b, "tenor_years") for b in typ("Bond") if prop(b, "currency") == "CNY")
        / sum(prop(b, "currency") == "CNY" for b in typ("Bond"))
    ),
)
q(
    "AF+AC",
    "How many monthly indicators are there?",
    "月度指标有多少个？",
    lambda: cnt(sum(prop(i, "frequency") == "monthly" for i in typ("Indicator"))),
)
q(
    "AF+AC",
    "What was the maximum DR007 last week?",
    "最近一周DR007最高是多少？",
    lambda: val(max(v for _, v in series("DR007", "2026-11-14T00:00:00Z"))),
)
q(
    "AF+AC",
    "Which yield indicator has the highest latest value?",
    "哪个收益率指标的最新值最高？",
    lambda: ids(["US10Y"]),
)

# -- AF+RR -----------------------------------------------------------------------------------
q("AF+RR", "Who is the CEO of Apple?", "苹果公司的CEO是谁？", lambda: ids(["PERSON_TIM_COOK"]))
q(
    "AF+RR",
    "Which companies belong to the banking industry?",
    "哪些公司属于银行行业？",
    lambda: ids(x["head"] for x in rel(r="BELONGS_TO", tail="IND_BANKS")),
)
q(
    "AF+RR",
    "Which Chinese companies are in the high dividend theme?",
    "高股息概念有哪些中国公司？",
    lambda: ids(
        x["head"]
        for x in rel(r="BELONGS_TO", tail="THEME_HIGH_DIVIDEND")
        if rel(x["head"], "LISTED_IN", "CN")
    ),
)
q(
    "AF+RR",
    "Which semiconductor companies are listed in the US?",
    "哪些半导体公司在美国上市？",
    lambda: ids(
        x["head"]
        for x in rel(r="BELONGS_TO", tail="IND_SEMIS")
        if rel(x["head"], "LISTED_IN", "US")
    ),
)
q(
    "AF+RR",
    "Which bonds are issued by the US Treasury?",
    "美国财政部发行了哪些债券？",
    lambda: ids(x["head"] for x in rel(r="ISSUED_BY", tail="US_TREASURY")),
)
q(
    "AF+RR",
    "Which funds hold Kweichow Moutai?",
    "哪些基金持有贵州茅台？",
    lambda: ids(x["head"] for x in rel(r="HAS_STAKE_IN", tail="600519.SH")),
)
q(
    "AF+RR",
    "Which fund does Zhang Kun manage?",
    "张坤管理哪只基金？",
    lambda: ids(x["tail"] for x in rel("PERSON_ZHANG_KUN", "MANAGES")),
)
q(
    "AF+RR",
    "Which indicator tracks the 10-year US Treasury note?",
    "哪个指标跟踪美国10年期国债？",
    lambda: ids(x["head"] for x in rel(r="TRACKS", tail="UST_10Y")),
)
q(
    "AF+RR",
    "Who is the governor of the People's Bank of China?",
    "中国人民银行的行长是谁？",
    lambda: ids(["PERSON_PAN_GONGSHENG"]),
)
q(
    "AF+RR",
    "Which industry does CATL belong to?",
    "宁德时代属于哪个行业？",
    lambda: ids(["IND_BATTERIES"]),
)
q(
    "AF+RR",
    "Which companies does the E Fund Blue Chip fund hold?",
    "易方达蓝筹精选持有哪些公司？",
    lambda: ids(x["tail"] for x in rel("005827.OF", "HAS_STAKE_IN")),
)
q(
    "AF+RR",
    "Which companies are in the same industry as Intel?",
    "和英特尔同属一个行业的公司有哪些？",
    lambda: ids(["NVDA", "AMD"]),
)
q(
    "AF+RR",
    "Which institution sets the federal funds rate?",
    "哪个机构制定美国联邦基金利率？",
    lambda: ids(["FED"]),
)
q(
    "AF+RR",
    "Which artificial intelligence companies are listed on NASDAQ?",
    "哪些人工智能概念公司在纳斯达克上市？",
    lambda: ids(x["head"] for x in rel(r="BELONGS_TO", tail="THEME_AI") if x["head"] in nasdaq),
)
q(
    "AF+RR",
    "Which companies does the fund managed by Zhang Kun hold?",
    "张坤管理的基金持有哪些公司？",
    lambda: ids(x["tail"] for x in rel("005827.OF", "HAS_STAKE_IN")),
)
q(
    "AF+RR",
    "Who is the chairman of CATL?",
    "宁德时代的董事长是谁？",
    lambda: ids(["PERSON_ZENG_YUQUN"]),
)

# -- AF+AC+RR --------------------------------------------------------------------------------
banks = [x["head"] for x in rel(r="BELONGS_TO", tail="IND_BANKS")]
q(
    "AF+AC+RR",
    "How many companies belong to the banking industry?",
    "银行行业有多少家公司？",
    lambda: cnt(len(banks)),
)
q(
    "AF+AC+RR",
    "How many Chinese banks are there?",
    "中国有几家银行股？",
    lambda: cnt(sum(bool(rel(b, "LISTED_IN", "CN")) for b in banks)),
)
q(
    "AF+AC+RR",
    "How many companies are in the artificial intelligence theme?",
    "人工智能概念有几家公司？",
    lambda: cnt(len(rel(r="BELONGS_TO", tail="THEME_AI"))),
)
q(
    "AF+AC+RR",
    "What is the latest yield of the indicator that tracks the US 10-year Treasury note?",
    "跟踪美国10年期国债的指标最新值是多少？",
    lambda: val(latest("US10Y")),
)
q(
    "AF+AC+RR",
    "What was the highest yield of the China 10-year government bond on 2026-11-19?",
    "2026年11月19日10年期国债的收益率最高是多少？",
    lambda: val(max(day("CN10Y", "2026-11-19"))),
)
q(
    "AF+AC+RR",
    "How many bonds does the US Treasury issue?",
    "美国财政部发行了几只债券？",
    lambda: cnt(len(rel(r="ISSUED_BY", tail="US_TREASURY"))),
)
q(
    "AF+AC+RR",
    "How many companies does the E Fund Blue Chip fund hold?",
    "易方达蓝筹精选持有几家公司？",
    lambda: cnt(len(rel("005827.OF", "HAS_STAKE_IN"))),
)
q(
    "AF+AC+RR",
    "How many companies are listed in China?",
    "在中国上市的公司有多少家？",
    lambda: cnt(sum(bool(rel(c, "LISTED_IN", "CN")) for c in companies)),
)
q(
    "AF+AC+RR",
    "Which US bond has the longest tenor?",
    "哪只美国债券期限最长？",
    lambda: ids(["UST_30Y"]),
)
q(
    "AF+AC+RR",
    "How many semiconductor companies are listed on NASDAQ?",
    "纳斯达克上市的半导体公司有几家？",
    lambda: cnt(sum(x["head"] in nasdaq for x in rel(r="BELONGS_TO", tail="IND_SEMIS"))),
)
q(
    "AF+AC+RR",
    "What is the average tenor of bonds issued by the Ministry of Finance?",
    "财政部发行的债券平均期限是多少？",
    lambda: val(
        sum(prop(x["head"], "tenor_years") for x in rel(r="ISSUED_BY", tail="MOF_CN"))
        / len(rel(r="ISSUED_BY", tail="MOF_CN"))
    ),
)


# -- held out: written before the first run of the ones above was looked at for tuning,
# other wordings and entities; kept apart to report accuracy the rules were not fit on.
DEV = list(Q)
Q.clear()
q(
    "AF",
    "List the companies traded on the Shanghai Stock Exchange.",
    "列出在上交所上市的股票。",
    lambda: ids(c for c in companies if prop(c, "exchange") == "SSE"),
)
q("AF", "What is the stock code of BYD?", "比亚迪的证券代码是什么？", lambda: [{"code": "002594"}])
q(
    "AF",
    "Which yield indicators are there?",
    "有哪些收益率指标？",
    lambda: ids(i for i in typ("Indicator") if prop(i, "category") == "yield"),
)
q(
    "AF",
    "Which bonds are denominated in renminbi?",
    None,
    lambda: ids(b for b in typ("Bond") if prop(b, "currency") == "CNY"),
)
q(
    "AF",
    "What is the exchange of JPMorgan?",
    "摩根大通在哪个交易所上市？",
    lambda: [{"exchange": "NYSE"}],
)
q(
    "AC",
    "What is the current US 2-year yield?",
    "美国2年期国债收益率目前是多少？",
    lambda: val(latest("US2Y")),
)
q(
    "AC",
    "What was the lowest US 10-year yield on 2026-11-16?",
    None,
    lambda: val(min(day("US10Y", "2026-11-16"))),
)
q(
    "AC",
    "What was the mean DR007 on 2026-11-20?",
    "2026年11月20日DR007均值是多少？",
    lambda: val(sum(day("DR007", "2026-11-20")) / len(day("DR007", "2026-11-20"))),
)
q("AC", "How many bonds are there?", "一共有几只债券？", lambda: cnt(len(typ("Bond"))))
q("AC", "What is the latest M2 growth?", "M2最新值是多少？", lambda: val(latest("CN_M2")))
q("AC", "What was the lowest China PMI?", None, lambda: val(min(v for _, v in series("CN_PMI"))))
q(
    "AF+AC",
    "How many companies are listed on the Shanghai Stock Exchange?",
    "上交所有几家上市公司？",
    lambda: cnt(sum(prop(c, "exchange") == "SSE" for c in companies)),
)
q(
    "AF+AC",
    "How many bonds have a tenor of at least 10 years?",
    "期限不低于10年的债券有几只？",
    lambda: cnt(sum(prop(b, "tenor_years") >= 10 for b in typ("Bond"))),
)
q(
    "AF+AC",
    "How many times did DR007 exceed 1.5% on 2026-11-19?",
    None,
    lambda: cnt(sum(v > 1.5 for v in day("DR007", "2026-11-19"))),
)
q("AF+RR", "Who runs Tesla as CEO?", "特斯拉的首席执行官是谁？", lambda: ids(["PERSON_ELON_MUSK"]))
q(
    "AF+RR",
    "Which companies are in the new energy vehicle theme?",
    "新能源汽车概念股有哪些？",
    lambda: ids(x["head"] for x in rel(r="BELONGS_TO", tail="THEME_NEV")),
)
q(
    "AF+RR",
    "Who chairs the Federal Reserve?",
    "美联储主席是谁？",
    lambda: ids(["PERSON_JEROME_POWELL"]),
)
q(
    "AF+RR",
    "Which bonds does the China Development Bank issue?",
    "国家开发银行发行了哪些债券？",
    lambda: ids(x["head"] for x in rel(r="ISSUED_BY", tail="CDB")),
)
q(
    "AF+RR",
    "Which company is Jensen Huang an executive of?",
    "黄仁勋是哪家公司的高管？",
    lambda: ids(["NVDA"]),
)
q(
    "AF+RR",
    "Which Chinese liquor companies are there?",
    "白酒行业有哪些公司？",
    lambda: ids(x["head"] for x in rel(r="BELONGS_TO", tail="IND_LIQUOR")),
)
q(
    "AF+RR",
    "Which companies are in the same industry as Moutai?",
    "和茅台同行业的公司有哪些？",
    lambda: ids(["000858.SZ"]),
)
q(
    "AF+AC+RR",
    "How many companies are in the new energy vehicle theme?",
    "新能源汽车概念有几家公司？",
    lambda: cnt(len(rel(r="BELONGS_TO", tail="THEME_NEV"))),
)
q(
    "AF+AC+RR",
    "How many US banks are there?",
    "美国有几家银行？",
    lambda: cnt(sum(bool(rel(b, "LISTED_IN", "US")) for b in banks)),
)
q(
    "AF+AC+RR",
    "What is the latest value of the indicator tracking the China 10-year government bond?",
    None,
    lambda: val(latest("CN10Y")),
)
q(
    "AF+AC+RR",
    "Which Chinese bond has the longest tenor?",
    "哪只中国债券期限最长？",
    lambda: ids(["CGB_30Y"]),
)
q(
    "AF+AC+RR",
    "How many bonds does the Ministry of Finance issue?",
    "财政部发行了几只债券？",
    lambda: cnt(len(rel(r="ISSUED_BY", tail="MOF_CN"))),
)
HELDOUT = list(Q)
Q.clear()
# -- a third set, written after all tuning on the two above (19:58 UTC), run once as is
q(
    "AF",
    "Which companies are listed on Nasdaq and belong to the internet industry?",
    None,
    lambda: ids(x["head"] for x in rel(r="BELONGS_TO", tail="IND_INTERNET") if x["head"] in nasdaq),
)
q(
    "AF",
    "What is the currency of the US 30-year Treasury bond?",
    "美国30年期国债的币种是什么？",
    lambda: [{"currency": "USD"}],
)
q(
    "AF",
    "Show the funds of type mixed.",
    None,
    lambda: ids(f for f in typ("Fund") if prop(f, "fund_type") == "mixed"),
)
q(
    "AC",
    "What was the highest DR007 on 2026-11-19?",
    "2026年11月19日DR007最高是多少？",
    lambda: val(max(day("DR007", "2026-11-19"))),
)
q(
    "AC",
    "What is the latest China PMI reading?",
    "中国PMI最新读数是多少？",
    lambda: val(latest("CN_PMI")),
)
q(
    "AC",
    "How many executives are in the graph?",
    "图谱中有几位高管？",
    lambda: cnt(len(typ("Executive"))),
)
q(
    "AC",
    "What was the average US 10-year yield last week?",
    None,
    lambda: val(
        sum(v for _, v in series("US10Y", "2026-11-14T00:00:00Z"))
        / len(series("US10Y", "2026-11-14T00:00:00Z"))
    ),
)
q(
    "AF+AC",
    "How many bonds are denominated in US dollars?",
    "以美元计价的债券有几只？",
    lambda: cnt(sum(prop(b, "currency") == "USD" for b in typ("Bond"))),
)
q(
    "AF+AC",
    "How many times was DR007 below 1.48% last week?",
    None,
    lambda: cnt(sum(v < 1.48 for _, v in series("DR007", "2026-11-14T00:00:00Z"))),
)
q(
    "AF+RR",
    "Who is the CEO of JPMorgan?",
    "摩根大通的CEO是谁？",
    lambda: ids(["PERSON_JAMIE_DIMON"]),
)
q(
    "AF+RR",
    "Which bonds are issued by the Chinese Ministry of Finance?",
    "中国财政部发行了哪些债券？",
    lambda: ids(x["head"] for x in rel(r="ISSUED_BY", tail="MOF_CN")),
)
q(
    "AF+RR",
    "Which companies are in the same industry as Ping An Bank?",
    None,
    lambda: ids(
        x["head"] for x in rel(r="BELONGS_TO", tail="IND_BANKS") if x["head"] != "000001.SZ"
    ),
)
q(
    "AF+RR",
    "Which institution does Pan Gongsheng work for?",
    "潘功胜在哪个机构任职？",
    lambda: ids(["PBOC"]),
)
q(
    "AF+AC+RR",
    "How many companies are in the high dividend theme?",
    "高股息概念有几家公司？",
    lambda: cnt(len(rel(r="BELONGS_TO", tail="THEME_HIGH_DIVIDEND"))),
)
q(
    "AF+AC+RR",
    "What was the lowest yield of the US 2-year Treasury note on 2026-11-17?",
    None,
    lambda: val(min(day("US2Y", "2026-11-17"))),
)
q(
    "AF+AC+RR",
    "How many oil and gas companies are listed in China?",
    "在中国上市的石油石化公司有几家？",
    lambda: cnt(
        sum(
            bool(rel(x["head"], "LISTED_IN", "CN")) for x in rel(r="BELONGS_TO", tail="IND_OIL_GAS")
        )
    ),
)
FRESH = list(Q)


def write(
    path: Path, items: list[tuple[str, str, str, Callable[[], list[dict[str, Any]]]]]
) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for type_, question, lang, fn in items:
            row = {"question": question, "type": type_, "lang": lang, "expected": fn(), "now": NOW}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(items)} questions -> {path}")


def main() -> None:
    write(HERE / "questions.jsonl", DEV)
    write(HERE / "questions_heldout.jsonl", HELDOUT)
    write(HERE / "questions_fresh.jsonl", FRESH)


if __name__ == "__main__":
    main()
