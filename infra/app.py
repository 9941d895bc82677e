"""CDK entry point (``cdk.json``: ``python3 -m infra.app``), checked by cdk-nag AwsSolutions.

Run as a module from the repository root, so ``infra`` is a package on ``sys.path`` and the
``constructs`` library is never shadowed (the constructs live in ``infra/components/``).
"""

from __future__ import annotations

import os
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.constants import STACK_ID, Config
from infra.stack import PromptPipeStack


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
