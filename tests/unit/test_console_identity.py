"""Each coordinator's console token (console/identity.py): printed once, kept hashed, compared in
constant time; roles; the form token bound to the credential; the CSV and multipart readers of
the management forms (console/manage.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptpipe.cli.commands import main
from promptpipe.console.identity import Identity, Role, TokenBook, form_token, token_hash
from promptpipe.console.manage import read_form, read_rows
from promptpipe.exit_codes import CliError


def test_a_token_is_printed_once_and_kept_only_hashed(tmp_path: Path) -> None:
    book = TokenBook(tmp_path / "tokens.json")
    token = book.add("Ana", Role.COORDINATOR)
    viewer = book.add("Vic", Role.VIEWER)
    stored = (tmp_path / "tokens.json").read_text()
    assert token not in stored and token_hash(token) in stored
    assert (tmp_path / "tokens.json").stat().st_mode & 0o777 == 0o600
    assert book.identify(token) == Identity("Ana", Role.COORDINATOR)
    assert book.identify(viewer) == Identity("Vic", Role.VIEWER) and not Identity("Vic", Role.VIEWER).can_act
    assert book.identify("guess") is None
    # A new token for Ana replaces her old one; removing her ends it
    again = book.add("Ana", Role.VIEWER)
    assert book.identify(token) is None and book.identify(again) == Identity("Ana", Role.VIEWER)
    assert [name for name, _, _ in book.listed()] == ["Vic", "Ana"]
    assert book.remove("Ana") and not book.remove("Ana")
    assert book.identify(again) is None


def test_a_book_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    assert TokenBook(tmp_path / "missing.json").identify("x") is None
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CliError, match="cannot read the console tokens"):
        TokenBook(tmp_path / "bad.json").identify("x")
    (tmp_path / "odd.json").write_text(
        json.dumps({"tokens": [{"name": "x", "role": "admin", "sha256": token_hash("t")}]})
    )
    assert TokenBook(tmp_path / "odd.json").identify("t") is None  # no such role
    with pytest.raises(CliError, match="names its coordinator"):
        TokenBook(tmp_path / "t.json").add("  ", Role.VIEWER)


def test_the_form_token_is_bound_to_the_credential() -> None:
    secret = b"s" * 32
    assert form_token(secret, "ana-token") == form_token(secret, "ana-token")
    assert form_token(secret, "ana-token") != form_token(secret, "vic-token")
    assert form_token(secret, "ana-token") != form_token(b"t" * 32, "ana-token")


def test_the_console_token_command_adds_lists_and_removes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "tokens.json")
    assert main(["console-token", "add", "Ana Lopez", "--role", "viewer", "--tokens", path]) == 0
    token = capsys.readouterr().out.splitlines()[1]
    assert TokenBook(Path(path)).identify(token) == Identity("Ana Lopez", Role.VIEWER)
    assert main(["console-token", "list", "--tokens", path]) == 0
    listed = capsys.readouterr().out
    assert "Ana Lopez\tviewer" in listed and token not in listed
    assert main(["console-token", "remove", "Ana Lopez", "--tokens", path]) == 0
    assert main(["console-token", "remove", "Ana Lopez", "--tokens", path]) == 2


def test_the_cohort_csv_reads_as_enrolment_requests() -> None:
    text = (
        "\ufeffPhone,Name,Zone,consent_at,consent_version,consent_method\n"
        "+1 416 555 0101,Ana,America/Toronto,2026-03-01T10:00:00Z,v2,paper\n"
        "+1 416 555 0102,,,,,\n"
        ",,,,,\n"
        "+1 416 555 0103,Bo,UTC,,,,surplus\n"
    )
    rows = read_rows(text)
    assert rows[0] == {
        "phone_number": "+1 416 555 0101",
        "name": "Ana",
        "timezone": "America/Toronto",
        "consent": {"at": "2026-03-01T10:00:00Z", "version": "v2", "method": "paper"},
    }
    assert rows[1] == {"phone_number": "+1 416 555 0102"}
    assert len(rows) == 3 and rows[2]["extra cells"] == "surplus"  # the API's check names it


def test_a_posted_file_and_a_plain_form_read_the_same_way() -> None:
    assert read_form("application/x-www-form-urlencoded", b"token=t&reason=on+holiday") == {
        "token": "t",
        "reason": "on holiday",
    }
    body = (
        b'--XyZ\r\nContent-Disposition: form-data; name="token"\r\n\r\nt\r\n'
        b'--XyZ\r\nContent-Disposition: form-data; name="csv"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n'
        b"\xef\xbb\xbfphone_number\n+1 416 555 0101\n\r\n--XyZ--\r\n"
    )
    form = read_form("multipart/form-data; boundary=XyZ", body)
    assert form == {"token": "t", "csv": "phone_number\n+1 416 555 0101\n"}
