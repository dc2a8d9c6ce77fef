"""Making the toy pack (or a broken variant) installed for a subprocess, without touching this venv.

The pack's files are copied into a temporary site folder beside a ``.dist-info`` whose entry
points are the ones ``examples/toy-pack/pyproject.toml`` declares (or one naming a broken
variant); the folder goes on ``PYTHONPATH`` of the certification run, which then finds the
pack through ``importlib.metadata`` exactly as it finds an installed distribution."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOY = ROOT / "examples" / "toy-pack"
CONVERTERS = TOY / "converters"
SAMPLES = TOY / "samples"
PLUGINS = Path(__file__).resolve().parent / "plugins"


def declared_entry_points() -> dict[str, dict[str, str]]:
    return tomllib.loads((TOY / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]


def toy_site(folder: Path, pack: str | None = None, group: str = "asr_conformance.format_packs") -> Path:
    """A site folder holding the toy pack; ``pack`` names another object (``broken_toy_packs:HOLLOW``) to register."""
    site = folder / "site"
    shutil.copytree(TOY / "src" / "asr_toy_pack", site / "asr_toy_pack",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if pack is not None:
        shutil.copy(PLUGINS / "broken_toy_packs.py", site / "broken_toy_packs.py")
        points = {group: {"toy": pack}}
    else:
        points = declared_entry_points()
    name = "asr_toy_pack" if pack is None else "broken_toy_packs"
    info = site / f"{name}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) for g, entries in points.items()),
        encoding="utf-8")
    return site
