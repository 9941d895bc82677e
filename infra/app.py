"""CDK entry point (``cdk.json``: ``python3 infra/app.py``), checked by cdk-nag AwsSolutions.

Run as a script, Python puts ``infra/`` first on ``sys.path``, where ``infra/constructs`` would
shadow the ``constructs`` library: the repository root takes its place.
"""

from __future__ import annotations

import sys
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0] or ".").resolve() == _REPO_ROOT / "infra":
    sys.path[0] = str(_REPO_ROOT)
elif str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

import os  # noqa: E402
from typing import Any  # noqa: E402

import aws_cdk as cdk  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402

from infra.constants import STACK_ID, Config  # noqa: E402
from infra.stack import PromptPipeStack  # noqa: E402


def build_app(**app_props: Any) -> tuple[cdk.App, PromptPipeStack]:
    """The app with its one stack and the cdk-nag plugin (tests pass ``context=...``)."""
    app = cdk.App(**app_props)
    stack = PromptPipeStack(
        app,
        STACK_ID,
        config=Config.from_context(app.node),
        description="PromptPipe Serverless: LLM habit coach over SMS / WhatsApp",
        # Environment-agnostic unless the CLI knows the account (cdk deploy with credentials).
        env=cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")),
    )
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
