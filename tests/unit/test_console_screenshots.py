"""docs/console.md's screenshots (scripts/tools/console_screenshots.py): every image it shows exists,
has an alt text, and is a small PNG — at most 1100 px wide and 150 KB."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from scripts.tools.console_screenshots import MAX_BYTES, PAGES, WIDTH

ROOT = Path(__file__).resolve().parents[2]
IMAGE = re.compile(r"!\[([^\]]*)\]\((images/[^)]+)\)")


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_every_screenshot_of_the_console_page_is_there_described_and_small() -> None:
    shown = IMAGE.findall((ROOT / "docs" / "console.md").read_text(encoding="utf-8"))
    names = {Path(target).name for _alt, target in shown}
    # what the script writes is what the page shows
    assert names == {f"console-{name}.png" for name in [*PAGES, "import"]}
    for alt, target in shown:
        path = ROOT / "docs" / target
        assert len(alt.split()) >= 3, target  # says what the picture shows
        assert path.stat().st_size <= MAX_BYTES, (target, path.stat().st_size)
        assert _png_size(path)[0] <= WIDTH, target
