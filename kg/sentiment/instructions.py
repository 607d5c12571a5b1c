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

from kg.models.prompts.sentiment import INSTRUCTIONS, format_input
from kg.sentiment.data import Example

__all__ = ["INSTRUCTIONS", "InstructionSample", "export_jsonl", "format_input", "format_prompt"]


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
