"""The HTML page in a real headless browser (Debian's chromium): it parses into the rule matrix,
the failing rules come first, the folded rows are folded, and it renders to a non-blank screenshot.

Skipped, with the reason, where no chromium is installed (.ci/run installs it)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACCEPT_ALL = ROOT / "examples" / "misbehaving" / "accept-all"
REFERENCE = ROOT / "examples" / "reference.toml"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (apt-get install chromium)")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A side-by-side report (the reference and accept-all) on a slice of the corpus."""
    where = tmp_path_factory.mktemp("page")
    subprocess.run(
        ["python", "-m", "pytest", "-p", "no:cacheprovider", f"--implementation={REFERENCE}",
         f"--implementation={ACCEPT_ALL}", "-m", "corpus", "-k", "ASR-260 or ASR-164", "--report-dir=out", "-q"],
        cwd=where, capture_output=True, timeout=300,
    )
    html = where / "out" / "report.html"
    assert html.is_file()
    return html


def chromium(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={cwd / 'profile'}", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def test_the_browser_parses_the_rule_matrix(page: Path) -> None:
    dom = chromium("--dump-dom", page.as_uri(), cwd=page.parent).stdout
    assert "<th>asr-conformance-reference</th><th>accept-all</th>" in dom
    assert dom.index('id="rule-ASR-260"') < dom.index('id="rule-ASR-285"')  # failing sections first
    assert 'class="chip s-fail"' in dom and 'class="chip s-pass"' in dom
    assert "<details>" in dom and "where every implementation agrees" in dom
    assert 'href="#r-accept-all-validator-ASR-260-' in dom  # a failing cell links to its case...
    assert 'id="r-accept-all-validator-ASR-260-' in dom     # ...shown with its stream below


def _png_rows_vary(png: bytes) -> bool:
    """True when the screenshot is not one flat colour (decodes the PNG's image data)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    data, offset = b"", 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset:offset + 8])
        if kind == b"IDAT":
            data += png[offset + 8:offset + 8 + length]
        offset += 12 + length
    pixels = zlib.decompress(data)
    return width > 0 and height > 0 and len(set(pixels[: len(pixels) // 4])) > 8


def test_the_page_renders_to_a_non_blank_screenshot(page: Path) -> None:
    shot = page.parent / "report.png"
    chromium(f"--screenshot={shot}", "--window-size=1400,1800", page.as_uri(), cwd=page.parent)
    assert shot.is_file() and shot.stat().st_size > 20_000
    assert _png_rows_vary(shot.read_bytes())
