"""The CLI loads only the feature modules a command line needs (cli/main.py), and what
it lists without loading them matches what the modules define."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import typer.main

from cli.main import COMMAND_MODULES, TOP_COMMANDS, _load, app

ENV = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_command_list_is_the_same_without_loading_the_feature_modules() -> None:
    lazy = _run(
        "import sys; sys.argv = ['livekg', '--help']\n"
        "from cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', [m for m in sys.modules if m.endswith('_cmds')])"
    )
    full = _run(
        "import sys; sys.argv = ['livekg', '--help']\n"
        "from cli.main import _load, app\n_load()\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
    )
    listing, loaded = lazy.rsplit("LOADED", 1)
    assert listing == full
    assert "status" in listing and "subscribe" in listing
    assert loaded.strip() == "[]"


def test_top_commands_name_their_module_and_first_help_paragraph() -> None:
    _load()
    group = typer.main.get_group(app)
    top = {name: cmd for name, cmd in group.commands.items() if name not in group_names()}
    assert set(top) == set(TOP_COMMANDS)
    for name, cmd in top.items():
        module, line = TOP_COMMANDS[name]
        assert cmd.callback is not None
        assert inspect.unwrap(cmd.callback).__module__ == module, name
        first = inspect.cleandoc(cmd.help or "").split("\n\n")[0]
        assert " ".join(first.split()) == line, name
    assert all(m in COMMAND_MODULES for m, _ in TOP_COMMANDS.values())


def group_names() -> set[str]:
    return {g.name for g in app.registered_groups if g.name}


def test_status_loads_neither_the_worker_nor_the_api() -> None:
    loaded = _run(
        "import sys\n"
        "from cli.main import dispatch\n"
        "dispatch(['status', '--help'])\n"
        "print(sorted(m for m in ('streams.worker', 'serving.app', 'faust', 'cli.query_cmds')"
        " if m in sys.modules))"
    )
    assert loaded.strip() == "[]"
    assert "'cli.runtime_cmds'" in _run(
        "import sys\nfrom cli.main import dispatch\ndispatch(['status'])\n"
        "print([m for m in sys.modules if m.startswith('cli.')])"
    )
