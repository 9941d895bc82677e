"""The CLI with the AWS profiles people use: an assumed role and an SSO sign-in. Offline, each ends in
one line and the documented exit code (docs/cli.md), never ``Unknown service`` and never a traceback:
the CLI reads botocore's full data (STS, SSO), not the functions' narrowed copy."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from promptpipe import settings
from promptpipe.adapters import aws
from promptpipe.cli.commands import EXIT_CONFIG, EXIT_UNAVAILABLE, main

CONFIG = """
[profile base]
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
region = us-east-1

[profile admin-role]
role_arn = arn:aws:iam::123456789012:role/promptpipe-admin
source_profile = base
region = us-east-1

[profile study-sso]
sso_session = study
sso_account_id = 123456789012
sso_role_name = PromptPipeAdmin
region = us-east-1

[sso-session study]
sso_start_url = https://example.awsapps.com/start
sso_region = us-east-1
sso_registration_scopes = sso:account:access
"""
STS, SSM = "127.0.0.1", "127.0.0.2"  # addresses, not names: nothing to resolve offline


@pytest.fixture
def refused_connections(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """An AWS config with the two profiles, no credentials in the environment, no SSO sign-in cached
    (a fresh HOME), and every connection refused (and recorded)."""
    (tmp_path / "config").write_text(CONFIG)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name in ("AWS_ENDPOINT_URL", "PROMPTPIPE_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", f"http://{STS}:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SSM", f"http://{SSM}:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # one refusal is enough (no backoff sleeps)
    monkeypatch.setenv("POWERTOOLS_LOG_LEVEL", "ERROR")
    monkeypatch.setattr(settings, "_settings", None)
    monkeypatch.setattr(aws, "_sessions", [])  # a session that reads this profile
    attempts: list[str] = []

    def refuse(self: socket.socket, address: object, *args: object) -> None:
        attempts.append(str(address))
        raise ConnectionRefusedError(f"offline test: no connection to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "Unknown service" not in err
    [line] = err.strip().splitlines()
    assert line.startswith("promptpipe prompts: AWS: ")
    return line


def test_an_assume_role_profile_asks_sts_and_fails_in_one_line_offline(
    monkeypatch: pytest.MonkeyPatch, refused_connections: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "admin-role")
    assert main(["prompts", "show"]) == EXIT_UNAVAILABLE
    line = _one_line_error(capsys)
    assert f"http://{STS}:9/" in line  # the role's credentials were asked of STS, before any SSM call
    assert refused_connections and all(STS in address for address in refused_connections)


def test_an_sso_profile_without_a_sign_in_says_to_sign_in_in_one_line_offline(
    monkeypatch: pytest.MonkeyPatch, refused_connections: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "study-sso")
    assert main(["prompts", "show"]) == EXIT_CONFIG
    line = _one_line_error(capsys)
    assert "SSO" in line and "aws sso login" in line
    assert refused_connections == []  # no token cached: nothing to send anywhere
