"""Peak resident memory of a benchmark's process tree (``livekg bench all`` runs every
bench under one; the pipeline bench samples its worker): one sampler for every bench."""

from __future__ import annotations

import os
import threading
from typing import Any

import psutil


def process_name(cmdline: list[str], fallback: str) -> str:
    """A short, stable name for a process of a bench's tree (for peak RSS per process)."""
    args = [a for a in cmdline if a]
    if "-m" in args and args.index("-m") + 1 < len(args):
        module = args[args.index("-m") + 1]
        if module == "cli.main":
            return "bench " + " ".join(args[args.index("-m") + 3 : args.index("-m") + 4])
        return module
    exe = os.path.basename(args[0].split(" ")[0]) if args else fallback  # redis: "x host:port"
    if exe.startswith("java"):  # its main class: the first argument that is no option
        rest = iter(args[1:])
        for arg in rest:
            if arg in ("-cp", "-classpath", "--class-path"):
                next(rest, None)
            elif not arg.startswith("-"):
                return "java " + arg.rsplit(".", 1)[-1]
        return exe
    return exe or fallback


class RssSampler(threading.Thread):
    """Peak RSS of a process and all its descendants, per process name, and of the
    whole tree at once (sampled every ``every`` seconds)."""

    def __init__(self, pid: int, every: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak: dict[str, float] = {}
        self.peak_total = 0.0
        self.done = threading.Event()

    def sample(self) -> None:
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        total = 0.0
        seen: dict[str, float] = {}
        for p in procs:
            try:
                rss = p.memory_info().rss / 2**20
                name = process_name(p.cmdline(), p.name())
            except psutil.Error:
                continue
            total += rss
            seen[name] = seen.get(name, 0.0) + rss  # same-named processes together
        for name, rss in seen.items():
            self.peak[name] = max(self.peak.get(name, 0.0), rss)
        self.peak_total = max(self.peak_total, total)

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(self.every)

    def result(self) -> dict[str, Any]:
        return {
            "peak_rss_mb": {k: round(v, 1) for k, v in sorted(self.peak.items())},
            "peak_total_rss_mb": round(self.peak_total, 1),
        }
