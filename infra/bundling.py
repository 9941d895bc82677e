"""The one Lambda code asset, built without Docker (docs/architecture.md#infrastructure, docs/platform.md#cdk-bundling).

``pip install`` fetches Linux wheels for the Lambda runtime into the asset directory, then the
application code is copied beside them:

    <asset>/functions/    handlers
    <asset>/promptpipe/   the core package (from shared/promptpipe)
    <asset>/prompts/      system prompt files (settings finds them beside the package)
    <asset>/<deps>/       runtime dependencies from pyproject.toml, minus what Lambda provides

The asset hash is computed here from the sources and the dependency list, so CDK reuses a bundle
already in ``cdk.out`` instead of re-running pip, and never fingerprints the repository root (which
holds .venv and node_modules).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

from infra.constants import LAMBDA_PYTHON_VERSION

REPO_ROOT = Path(__file__).resolve().parent.parent
# Bump to invalidate cached bundles when the bundling steps below change.
BUNDLER_VERSION = "1"
# Provided by the Lambda Python runtime; bundling them would only add ~25 MB and shadow the
# runtime's patched copies. botocore/s3transfer arrive transitively through aws-xray-sdk.
RUNTIME_PROVIDED = ("boto3", "botocore", "s3transfer")
# Lambda's Python 3.12 runtime is Amazon Linux 2023 (glibc 2.34): manylinux2014 and 2_28 wheels run.
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")
# (source relative to the repo root, destination inside the asset)
CODE_DIRS = (("functions", "functions"), ("shared/promptpipe", "promptpipe"), ("prompts", "prompts"))
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache", "*.egg-info")


def runtime_requirements(repo_root: Path = REPO_ROOT) -> list[str]:
    """``[project].dependencies`` of pyproject.toml without the packages the runtime provides."""
    with (repo_root / "pyproject.toml").open("rb") as handle:
        deps: list[str] = tomllib.load(handle)["project"]["dependencies"]
    return [dep for dep in deps if _dist_name(dep) not in RUNTIME_PROVIDED]


def _dist_name(requirement: str) -> str:
    name = requirement
    for sep in "[<>=!~; ":
        name = name.split(sep, 1)[0]
    return name.strip().lower().replace("_", "-")


def pip_command(requirements: Sequence[str], target: str) -> list[str]:
    """Wheels only, for the Lambda platform and Python version, whatever Python runs the synth."""
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        "--no-compile",  # .pyc built by this Python would be for the wrong version anyway
        "--target",
        target,
        *platforms,
        "--implementation",
        "cp",
        "--python-version",
        LAMBDA_PYTHON_VERSION,
        "--only-binary=:all:",
        *requirements,
    ]


def _excluded(relative: Path) -> bool:
    return relative.suffix in (".pyc", ".pyo") or any(
        part in ("__pycache__", ".pytest_cache") or part.endswith(".egg-info") for part in relative.parts
    )


def _source_files(repo_root: Path) -> Iterator[Path]:
    for source, _ in CODE_DIRS:
        for path in sorted((repo_root / source).rglob("*")):
            if path.is_file() and not _excluded(path.relative_to(repo_root)):
                yield path


def asset_hash(repo_root: Path = REPO_ROOT, requirements: Sequence[str] | None = None) -> str:
    """A hash of everything that goes into the asset: code, prompts, dependency list, steps."""
    digest = hashlib.sha256()
    for line in (BUNDLER_VERSION, LAMBDA_PYTHON_VERSION, *PLATFORMS, *(requirements or [])):
        digest.update(line.encode() + b"\0")
    for path in _source_files(repo_root):
        digest.update(str(path.relative_to(repo_root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@jsii.implements(cdk.ILocalBundling)
class PipLocalBundler:
    """``ILocalBundling`` that pip-installs the dependencies and copies the code (no Docker)."""

    def __init__(
        self,
        repo_root: Path,
        requirements: Sequence[str],
        run: Callable[..., Any] = subprocess.run,  # tests pass a fake pip
    ) -> None:
        self._repo_root = repo_root
        self._requirements = list(requirements)
        self._run = run

    def try_bundle(self, output_dir: str, *, image: cdk.DockerImage | None = None, **_: Any) -> bool:
        out = Path(output_dir)
        try:
            self._run(pip_command(self._requirements, output_dir), check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            # Raise rather than return False: the fallback would be Docker, which we do not use.
            raise RuntimeError(
                f"bundling the Lambda asset failed: pip could not install {self._requirements} "
                f"for {PLATFORMS[0]} / Python {LAMBDA_PYTHON_VERSION} (network? wheel missing?)"
            ) from exc
        for name in RUNTIME_PROVIDED:
            for path in out.glob(f"{name}*"):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        shutil.rmtree(out / "bin", ignore_errors=True)  # console scripts, unusable in Lambda
        for source, destination in CODE_DIRS:
            if not (self._repo_root / source).is_dir():
                raise RuntimeError(f"bundling the Lambda asset failed: {source}/ is missing")
            shutil.copytree(self._repo_root / source, out / destination, ignore=_IGNORED, dirs_exist_ok=True)
        return True


def lambda_code(repo_root: Path = REPO_ROOT) -> lambda_.Code:
    """The shared code asset of all five functions (bound once per stack by CDK)."""
    requirements = runtime_requirements(repo_root)
    return lambda_.Code.from_asset(
        str(repo_root),
        asset_hash_type=cdk.AssetHashType.CUSTOM,
        asset_hash=asset_hash(repo_root, requirements),
        bundling=cdk.BundlingOptions(
            # Mandatory, but never pulled: the local bundler always succeeds or raises.
            image=cdk.DockerImage.from_registry("unused"),
            local=PipLocalBundler(repo_root, requirements),
        ),
    )
