"""The reference's producer role: the example Claude Code converter in examples/.

The example is a single standard-library file meant to be copied, so it is
not part of the package; in a checkout the reference server loads it from
there and answers ``convert`` with it.  Installed without the checkout, the
reference has no producer role (``available()`` says so) and the bundled run
certifies validator and reader only.
"""

from __future__ import annotations

from functools import cache
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path
from types import ModuleType

CONVERTER = Path(__file__).resolve().parent.parent / "examples" / "claude-code-converter" / "asr-from-claude-code"


class Refusal(Exception):
    """The input is not a transcript the converter can read; the message says why."""


def available() -> bool:
    return CONVERTER.is_file()


@cache
def _converter() -> ModuleType:
    loader = SourceFileLoader("asr_from_claude_code", str(CONVERTER))
    spec = spec_from_loader(loader.name, loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


def reference_convert(path: str) -> bytes:
    """The stream for one native input; OSError when it cannot be read, Refusal when it is not a transcript."""
    converter = _converter()
    data = Path(path).read_bytes()
    try:
        return converter.convert(data)
    except converter.Refused as refused:
        raise Refusal(str(refused)) from None
