"""The README's command blocks work as pasted: the local server block runs as it stands."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _block_after(heading: str) -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index(heading) :]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _json_documents(text: str) -> list[dict]:
    decoder, found, index = json.JSONDecoder(), [], 0
    while (start := text.find("{", index)) != -1:
        try:
            document, index = decoder.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        found.append(document)
    return found


def _shell_env(tmp_path: Path) -> dict[str, str]:
    """`.venv/bin/…` of a `make` set-up; here the test's own interpreter with this checkout."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, target in (
        ("python", f'exec {sys.executable} "$@"'),
        ("promptpipe", f'exec {sys.executable} -m promptpipe.cli "$@"'),
    ):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{target}\n")
        script.chmod(0o755)
    env = {
        **os.environ,
        "PORT": str(_free_port()),
        "PYTHONPATH": f"{ROOT / 'shared'}{os.pathsep}{ROOT}",
        "OFFLINE_COACH": "true",
    }
    env.pop("OPENAI_API_KEY", None)
    return env


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's block uses curl")
def test_the_readme_serve_block_runs_as_pasted(tmp_path: Path) -> None:
    block = _block_after("### The local server")
    assert block.startswith("PORT=${PORT:-8000}")  # the block is taken as it stands
    env = _shell_env(tmp_path)
    result = subprocess.run(
        ["bash", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert result.returncode == 0, result.stderr
    outputs = _json_documents(result.stdout)  # curl prints the answers back to back
    enrolled = outputs[0]
    assert enrolled["status"] == "ok" and enrolled["result"]["name"] == "Sam"
    outbox = next(doc for doc in outputs if "messages" in doc)
    bodies = [m["body"] for m in outbox["messages"]]
    assert any(body.startswith("Hi Sam!") for body in bodies)  # the greeting
    assert any("Exercise" in body for body in bodies)  # the coach's answer to the signed webhook
    clock = outputs[-1]
    assert clock["now"].startswith("2026-03-03T13:0")  # a day after the start


def test_the_readme_coordinator_block_runs_as_pasted(tmp_path: Path) -> None:
    block = _block_after("The same from the command line")
    result = subprocess.run(
        ["bash", "-e", "-c", block],
        cwd=tmp_path,
        env=_shell_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Sam" in result.stdout and "times in America/Toronto" in result.stdout
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == [
        "adherence.csv",
        "audit.csv",
        "messages.jsonl",
        "participants.csv",
        "prompts.csv",
    ]
