"""axe-core for the console's accessibility test: the npm package, fetched at test set-up as Chromium
is (``.ci/run``: ``npm install --prefix .cache/axe axe-core@AXE_VERSION``), never vendored. Where it
is missing and npm is at hand, the first test that needs it installs it; else the test skips and
says how to get it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

AXE_VERSION = "4.14.1"
ROOT = Path(__file__).resolve().parents[2]
PREFIX = ROOT / ".cache" / "axe"
AXE_JS = PREFIX / "node_modules" / "axe-core" / "axe.min.js"
# The rules the issue names: labels and names, contrast, keyboard; every WCAG 2.1 A and AA rule runs.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_source() -> str | None:
    """axe.min.js, installing the pinned version once if npm is at hand; None when it cannot be had."""
    given = os.environ.get("AXE_CORE_JS")
    if given and Path(given).is_file():
        return Path(given).read_text(encoding="utf-8")
    if not AXE_JS.is_file() and shutil.which("npm"):
        subprocess.run(
            [
                "npm",
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(PREFIX),
                f"axe-core@{AXE_VERSION}",
            ],
            check=False,
            capture_output=True,
            timeout=300,
        )
    return AXE_JS.read_text(encoding="utf-8") if AXE_JS.is_file() else None


RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations']})
  .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(' ') + ' — ' + (n.failureSummary || '').split('\\n').slice(0, 2)
        .join(' '))}))))
  .catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));
"""


def violations(driver: Any, source: str) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.1 A/AA violations on the page the driver shows."""
    driver.execute_script(source)
    driver.set_script_timeout(60)
    return list(driver.execute_async_script(RUN, TAGS))
