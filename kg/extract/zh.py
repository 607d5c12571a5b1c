"""Chinese bond-market commentary: jieba word segmentation plus cue patterns, LLM-free.

The fast patterns (``kg.extract.patterns``, lang ``zh``) read indicator moves and
central-bank operations; this module adds what links them within a sentence:
market-status phrases (资金面宽松, 债市走强), causes (受...影响), bond issues
(...发行...中期票据), and institutions named by jieba (part of speech ``nt``).
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from kg.extract.types import Candidate, Component, DocContext

_lock = threading.Lock()
SENTENCE = re.compile(r"[^。！？；\n]+[。！？；]?")
STATUS = re.compile(
    r"(?P<status>资金面(?:整体)?(?:宽松|均衡|偏紧|收敛|平稳|偏松|转松|趋紧)|"
    r"债市(?:走强|走弱|震荡|回暖|承压|调整)|流动性(?:合理充裕|宽松|偏紧|充裕|收紧)|"
    r"市场情绪(?:回暖|谨慎|偏弱|修复)|股市(?:上涨|下跌|震荡))"
)
CAUSE = re.compile(r"受(?P<cause>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)(?:等因素)?(?:的)?影响")
ISSUE = re.compile(
    r"(?P<org>(?:中国|美国|日本)?财政部|[\u4e00-\u9fff]{2,16}?(?:公司|银行|集团|政府))"
    r"[^，。；]{0,20}?发行"
    r"(?:总额|规模为?|金额)?(?P<amt>\d+(?:\.\d+)?亿元)?(?P<bond>[\u4e00-\u9fff0-9A-Za-z]{0,16}?"
    r"(?:中期票据|短期融资券|公司债|企业债|专项债|特别国债|国债|金融债|二级资本债|永续债|绿色债券))"
    r"(?:[，,]\s*发行规模为?(?P<amt2>\d+(?:\.\d+)?亿元))?"
)
INDICATOR = re.compile(
    r"\d{1,2}年期(?:国债|国开债|政金债|地方债|美债)?(?:到期)?收益率|DR00[17]|R00[17]|"
    r"1年期LPR|5年期以上LPR|美元指数|人民币汇率"
)


@lru_cache(maxsize=1)
def _jieba() -> Any:
    import jieba
    import jieba.posseg

    with _lock:
        jieba.setLogLevel(60)
        jieba.initialize()
    return jieba.posseg


def institutions(text: str) -> list[str]:
    """Organisation names jieba tags ``nt`` (央行, 财政部, 国家统计局 ...)."""
    return [w.word for w in _jieba().cut(text) if w.flag == "nt" and len(w.word) >= 2]


def _c(
    head: str, ht: str, rel: str, tail: str, tt: str, s: int, e: int, rule: str, **props: Any
) -> Candidate:
    return Candidate(head, ht, rel, tail, tt, s, e, Component.ZH, rule, None,
                     {k: v for k, v in props.items() if v}, 0.75)  # fmt: skip


def extract_zh(text: str, ctx: DocContext) -> list[Candidate]:
    out: list[Candidate] = []
    for sm in SENTENCE.finditer(text):
        sent, base = sm.group(0), sm.start()
        end = base + len(sent)
        statuses = [m.group("status") for m in STATUS.finditer(sent)]
        indicators = list(dict.fromkeys(m.group(0) for m in INDICATOR.finditer(sent)))
        # A status and an indicator or policy merely sharing a sentence ("资金面宽松，DR007
        # 下行") is no relation: only a stated cause (受...影响) links them.
        for m in CAUSE.finditer(sent):
            cause = m.group("cause")
            if cause in ("此", "这", "其") or len(cause) < 2:
                continue
            for ind in indicators:
                out.append(_c(ind, "Indicator", "IMPACTED_BY", cause, "Event", base, end, "cause"))
            for status in statuses:
                out.append(
                    _c(status, "MarketStatus", "IMPACTED_BY", cause, "Event", base, end, "cause")
                )
        for m in ISSUE.finditer(sent):
            org, bond = m.group("org"), m.group("bond")
            amount = m.group("amt") or m.group("amt2") or ""
            state = org.endswith(("财政部", "政府"))
            issuer_type = "Institution" if state else "Company"
            out.append(_c(bond, "Bond", "ISSUED_BY", org, issuer_type, base, end,
                          "bond_issue", amount=amount))  # fmt: skip
            # the issue as the issuer's act, as readers of the wraps write it: the
            # treasury's sale is its policy, a company's its deal (role issuer)
            out.append(
                _c(org, issuer_type, "SETS_POLICY" if state else "INVOLVED_IN", bond,
                   "Policy" if state else "Event", base, end, "bond_issue_act", amount=amount,
                   action="发行", role="" if state else "issuer")
            )  # fmt: skip
    return out
