"""Instruction-following data for the LLM path (Zhang et al., section 3.2.1).

Each labelled sample becomes ``Human: [instruction] + [input], Assistant: [output]``
with one of ten human-written instructions picked at random (seeded, so an export is
reproducible). The JSONL export also carries chat ``messages`` so the same file feeds
common fine-tuning tools for a model later served by vLLM.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from kg.sentiment.data import Example

# Ten instructions, written by hand for this project (Zhang et al. follows FinGPT's recipe).
INSTRUCTIONS: tuple[str, ...] = (
    "What is the sentiment of this financial news? "
    "Answer with one word: negative, neutral or positive.",
    "Classify the sentiment of the following financial text as negative, neutral or positive.",
    "Is this headline good, bad or neither for the company or market it is about? "
    "Reply negative, neutral or positive.",
    "Read the market news below and tell me whether its tone for investors is "
    "negative, neutral or positive.",
    "Decide whether the following tweet about stocks is bearish (negative), neutral, or "
    "bullish (positive). Answer with negative, neutral or positive.",
    "As a financial analyst, label the sentiment of this statement: negative, neutral or positive?",
    "Give the financial sentiment of the text that follows. "
    "Choose from {negative, neutral, positive}.",
    "How would an investor feel after reading this? Please answer negative, neutral or positive.",
    "Determine the sentiment expressed toward the company or asset in this text. "
    "Options: negative, neutral, positive.",
    "Assess this piece of financial news and output its sentiment label "
    "(negative, neutral or positive) only.",
)


class InstructionSample(BaseModel):
    instruction: str
    input: str
    output: str
    context: str = ""

    @property
    def prompt(self) -> str:
        return format_prompt(self.instruction, self.input, self.context)

    @property
    def text(self) -> str:
        """The training string: ``Human: [instruction] + [input], Assistant: [output]``."""
        return f"{self.prompt}{self.output}"


def format_input(text: str, context: str = "") -> str:
    """The input, with retrieved context concatenated after it (Zhang et al., 3.3)."""
    text = text.strip()
    if context.strip():
        return f"{text}\nContext: {context.strip()}"
    return text


def format_prompt(instruction: str, text: str, context: str = "") -> str:
    return f"Human: {instruction}\n{format_input(text, context)}\nAssistant: "


def to_instruction(example: Example, rng: random.Random, context: str = "") -> InstructionSample:
    return InstructionSample(
        instruction=rng.choice(INSTRUCTIONS),
        input=example.text,
        output=example.label.value,
        context=context,
    )


def export_jsonl(examples: Iterable[Example], path: Path | str, *, seed: int = 0) -> int:
    """Write one JSON object per sample: instruction, input, output, text, messages."""
    rng = random.Random(seed)
    n = 0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for ex in examples:
            s = to_instruction(ex, rng)
            row = {
                "instruction": s.instruction,
                "input": s.input,
                "output": s.output,
                "text": s.text,
                "messages": [
                    {"role": "user", "content": f"{s.instruction}\n{format_input(s.input)}"},
                    {"role": "assistant", "content": s.output},
                ],
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n
