"""Per-function Lambda code assets, built without Docker (docs/architecture.md#infrastructure,
docs/platform.md#cdk-bundling).

``pip install`` fetches Linux wheels for the Lambda runtime into the asset directory, then the
application code is copied beside them:

    <asset>/functions/    handlers
    <asset>/promptpipe/   the core package (from shared/promptpipe)
    <asset>/prompts/      system prompt files (settings finds them beside the package)
    <asset>/<deps>/       the function's own dependency closure, the AWS SDK included (below)

Each function gets only what it imports: pyproject.toml's ``[project].dependencies`` plus the extras
named for it in ``FUNCTION_EXTRAS`` (the model client for the two model-calling functions, X-Ray for
all, since tracing is active in AWS). Versions come from the committed ``requirements.lock`` (pip's
``--constraint``), the same file that builds ``.venv``, so two builds of one commit hold the same
wheels. Functions with the same closure share one asset.

The AWS SDK (boto3, botocore, s3transfer) is bundled at the locked versions rather than taken from
the runtime, so the functions run the SDK their tests ran; its data is narrowed at build time to the
services the functions call, endpoint data included, cut from the botocore being packaged
(``infra/aws_sdk.py``). Nothing of this is committed and nothing runs at run time: the functions use
botocore's stock loader, which finds only what the asset holds (docs/benchmarks.md, section 2).

Lambda's ``/var/task`` is read-only and Python writes no bytecode there, so an asset without it
compiles every module it imports at every cold start (≈450 ms CPU for the webhook). With a Python of
the runtime's version on the synthesizing machine (``LAMBDA_PYTHON``, else ``python3.12`` on the
PATH), the asset is compiled (``compile_asset``); without one, ``cdk synth`` builds it uncompiled
with a warning and ``make deploy`` refuses it unless ``ALLOW_UNCOMPILED=1`` (``check_deployable``).

The asset hash is computed here from the sources, the requirement list and the lock file, so CDK
reuses a bundle already in ``cdk.out`` instead of re-running pip, and never fingerprints the
repository root (which holds .venv and node_modules).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

from infra.aws_sdk import narrow_aws_sdk
from infra.constants import LAMBDA_PYTHON_VERSION

REPO_ROOT = Path(__file__).resolve().parent.parent
# Bump to invalidate cached bundles when the bundling steps below change.
BUNDLER_VERSION = "5"
# Hash-based bytecode that Python uses without comparing it to any source's time stamp.
COMPILE = ("-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash")
# Lambda's Python 3.12 runtime is Amazon Linux 2023 (glibc 2.34): manylinux2014 and 2_28 wheels run.
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")
LOCK_FILE = "requirements.lock"
# Extras of pyproject.toml each function needs beyond [project].dependencies (keys: FunctionSpec.key).
FUNCTION_EXTRAS: dict[str, tuple[str, ...]] = {
    "enrollment": ("tracing",),
    "webhook": ("tracing",),
    "worker": ("llm", "tracing"),
    "scheduled-prompt": ("llm", "tracing"),
    "timers": ("tracing",),
}
# (source relative to the repo root, destination inside the asset)
CODE_DIRS = (("functions", "functions"), ("shared/promptpipe", "promptpipe"), ("prompts", "prompts"))
# The package's local composition roots (the CLI, the console, the local stack): above ``functions``
# in the import contracts' layers, so no function can import them; not shipped.
LOCAL_ONLY = tuple(f"shared/promptpipe/{name}" for name in ("cli", "console", "local"))


def runtime_requirements(repo_root: Path = REPO_ROOT, extras: Sequence[str] = ()) -> list[str]:
    """``[project].dependencies`` of pyproject.toml plus those of ``extras`` (the project itself left
    out)."""
    with (repo_root / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    deps: list[str] = list(project["dependencies"])
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            raise ValueError(f"pyproject.toml has no extra {extra!r}")
        deps += optional[extra]
    own = _dist_name(project["name"])
    return [dep for dep in deps if _dist_name(dep) != own]


def _dist_name(requirement: str) -> str:
    name = requirement
    for sep in "[<>=!~; ":
        name = name.split(sep, 1)[0]
    return name.strip().lower().replace("_", "-")


def pip_command(requirements: Sequence[str], target: str, constraints: Path | None = None) -> list[str]:
    """Wheels only, for the Lambda platform and Python version, whatever Python runs the synth;
    versions pinned by ``constraints`` (the lock file) when given."""
    pinned = ["--constraint", str(constraints)] if constraints is not None else []
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
        *pinned,
        *requirements,
    ]


def _excluded(relative: Path) -> bool:
    return (
        relative.suffix in (".pyc", ".pyo")
        or any(part in ("__pycache__", ".pytest_cache") or part.endswith(".egg-info") for part in relative.parts)
        or any(relative.is_relative_to(local) for local in LOCAL_ONLY)
    )


def _ignored(repo_root: Path) -> Callable[[str, list[str]], set[str]]:
    """``copytree``'s ``ignore``: what ``_excluded`` leaves out (caches, the local-only packages)."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory).relative_to(repo_root)
        return {name for name in names if _excluded(here / name)}

    return ignore


def _source_files(repo_root: Path) -> Iterator[Path]:
    for source, _ in CODE_DIRS:
        for path in sorted((repo_root / source).rglob("*")):
            if path.is_file() and not _excluded(path.relative_to(repo_root)):
                yield path


def bytecode_python(version: str = LAMBDA_PYTHON_VERSION) -> str | None:
    """A Python of the runtime's version on this machine, checked by running it (a pyenv shim may name
    one that is not selected): ``LAMBDA_PYTHON`` when set, else ``python3.12`` on the PATH; or ``None``."""
    found = os.environ.get("LAMBDA_PYTHON") or shutil.which(f"python{version}")
    if not found:
        return None
    try:
        done = subprocess.run(
            [found, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if done.returncode == 0 and done.stdout.strip() == version else None


# ``make deploy`` refuses assets without bytecode unless this is set to 1 (``check_deployable``).
ALLOW_UNCOMPILED = "ALLOW_UNCOMPILED"


def check_deployable(python: str | None, environ: Mapping[str, str]) -> str | None:
    """Why a deploy must not go ahead, in one line, or ``None``: the assets would ship without
    bytecode (``python``: ``bytecode_python()``, ``None`` when there is no Python of the runtime's
    version) and ``ALLOW_UNCOMPILED=1`` was not set. Called by ``make deploy`` before ``cdk deploy``."""
    if python is not None or environ.get(ALLOW_UNCOMPILED) == "1":
        return None
    return (
        f"no Python {LAMBDA_PYTHON_VERSION} to compile the Lambda assets with (each cold start would compile them, "
        f"≈0.45 s CPU more): install one (`.venv/bin/uv python install {LAMBDA_PYTHON_VERSION}`) and set "
        f"LAMBDA_PYTHON=$(.venv/bin/uv python find {LAMBDA_PYTHON_VERSION}), or set {ALLOW_UNCOMPILED}=1 "
        "to deploy uncompiled code"
    )


def deploy_check(environ: Mapping[str, str] = os.environ) -> int:
    """``python -m infra.bundling``: exit 1 with ``check_deployable``'s line, else 0."""
    refusal = check_deployable(bytecode_python(), environ)
    if refusal is not None:
        print(f"make deploy: {refusal}", file=sys.stderr)
        return 1
    return 0


def compile_asset(out: Path, python: str, run: Callable[..., Any] = subprocess.run) -> None:
    """Compile the asset's Python with ``python`` (the runtime's version): the dependencies to bytecode
    only, their sources dropped (with sources and bytecode both, the webhook's asset would be 34 MB
    against the 25 MB target; their tracebacks lose the source lines, not the file and line numbers),
    our own code beside its sources (its tracebacks keep their lines). A dependency file that does
    not compile (some packages ship files for other Pythons) keeps its source."""
    own = {destination for _, destination in CODE_DIRS}
    dependencies = sorted(p for p in out.iterdir() if p.name not in own and (p.is_dir() or p.suffix == ".py"))
    if dependencies:
        run([python, *COMPILE, "-b", *map(str, dependencies)], check=False)
    for source in _python_files(dependencies):
        if source.with_suffix(".pyc").is_file():
            source.unlink()
    run([python, *COMPILE, *(str(out / d) for _, d in CODE_DIRS if (out / d).is_dir())], check=True)


def _python_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        yield from (path.rglob("*.py") if path.is_dir() else [path])


def asset_hash(
    repo_root: Path = REPO_ROOT, requirements: Sequence[str] | None = None, bytecode: str | None = None
) -> str:
    """A hash of everything that goes into the asset: code, prompts, dependency list, lock, steps, and
    whether it is compiled (``bytecode``: the Python version that compiles it, or ``None``)."""
    digest = hashlib.sha256()
    steps = (BUNDLER_VERSION, LAMBDA_PYTHON_VERSION, f"bytecode={bytecode}", *PLATFORMS)
    for line in (*steps, *(requirements or [])):
        digest.update(line.encode() + b"\0")
    lock = repo_root / LOCK_FILE
    digest.update(hashlib.sha256(lock.read_bytes()).digest() if lock.is_file() else b"no lock")
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
        bytecode: str | None = None,  # a Python of the runtime's version (``bytecode_python()``)
    ) -> None:
        self._repo_root = repo_root
        self._requirements = list(requirements)
        self._run = run
        self._bytecode = bytecode

    def try_bundle(self, output_dir: str, *, image: cdk.DockerImage | None = None, **_: Any) -> bool:
        out = Path(output_dir)
        lock = self._repo_root / LOCK_FILE
        if not lock.is_file():
            raise RuntimeError(f"bundling the Lambda asset failed: {LOCK_FILE} is missing (run `make lock`)")
        try:
            self._run(pip_command(self._requirements, output_dir, lock), check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            # Raise rather than return False: the fallback would be Docker, which we do not use.
            raise RuntimeError(
                f"bundling the Lambda asset failed: pip could not install {self._requirements} "
                f"for {PLATFORMS[0]} / Python {LAMBDA_PYTHON_VERSION} (network? wheel missing?)"
            ) from exc
        narrow_aws_sdk(out)
        shutil.rmtree(out / "bin", ignore_errors=True)  # console scripts, unusable in Lambda
        for source, destination in CODE_DIRS:
            if not (self._repo_root / source).is_dir():
                raise RuntimeError(f"bundling the Lambda asset failed: {source}/ is missing")
            ignore = _ignored(self._repo_root)
            shutil.copytree(self._repo_root / source, out / destination, ignore=ignore, dirs_exist_ok=True)
        if self._bytecode is not None:
            compile_asset(out, self._bytecode, self._run)
        else:
            print(
                f"promptpipe bundling: no python{LAMBDA_PYTHON_VERSION} on the PATH nor in LAMBDA_PYTHON, so the "
                "asset ships without bytecode and every cold start compiles it (≈0.45 s CPU more; "
                "docs/benchmarks.md section 2)",
                file=sys.stderr,
            )
        return True


def function_code(function_key: str, repo_root: Path = REPO_ROOT) -> lambda_.Code:
    """The code asset of one function (``FunctionSpec.key``): its own dependency closure. Bind one
    object per stack (CDK ties an asset to the stack that binds it first)."""
    return lambda_code(repo_root, FUNCTION_EXTRAS[function_key])


def lambda_code(repo_root: Path = REPO_ROOT, extras: tuple[str, ...] = ()) -> lambda_.Code:
    """A code asset with the core dependencies plus ``extras``' (one per distinct closure)."""
    requirements = runtime_requirements(repo_root, extras)
    python = bytecode_python()
    return lambda_.Code.from_asset(
        str(repo_root),
        asset_hash_type=cdk.AssetHashType.CUSTOM,
        asset_hash=asset_hash(repo_root, requirements, LAMBDA_PYTHON_VERSION if python else None),
        bundling=cdk.BundlingOptions(
            # Mandatory, but never pulled: the local bundler always succeeds or raises.
            image=cdk.DockerImage.from_registry("unused"),
            local=PipLocalBundler(repo_root, requirements, bytecode=python),
        ),
    )


if __name__ == "__main__":  # pragma: no cover - make deploy's check; deploy_check is tested
    sys.exit(deploy_check())
