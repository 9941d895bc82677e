"""docs/architecture.md's IAM table is the synthesized stack's (rendered by tests/infra/iam_table.py)."""

from __future__ import annotations

from tests.infra.iam_table import documented_table, render_table
from tests.infra.synth import REPO_ROOT, Synth


def test_the_documented_iam_table_is_the_synthesized_one(synth: Synth) -> None:
    documented = documented_table((REPO_ROOT / "docs" / "architecture.md").read_text())
    rendered = render_table(synth)
    assert documented == rendered, (
        "docs/architecture.md's IAM table differs from the stack; replace it with the output of "
        "`.venv/bin/python -m tests.infra.iam_table`:\n" + "\n".join(rendered)
    )
