"""The console runs a study, as one story from outside in headless Chromium (docs/console.md, "Tested
as a coordinator uses it"), on `promptpipe serve`'s local stack with the demo week played, signed in
with a coordinator's own token: enrol one participant; import a CSV of 50 rows with 3 bad (the preview
names the 3, the other 47 land in the list); edit a zone and the next prompt's schedule moves; send a
staff message (it reaches the outbox, the coach is held); release; the provider reports that message
undelivered and the page reads the failure in plain words; sort and filter the list; and find every
action in the audit, with who (the principal that signed the API call) and for whom and why. The
separate tests of test_console_manage.py and test_console_runs_a_study.py check each step in more
detail; this one checks that they make one working day."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from promptpipe.console.app import ConsoleServer
from promptpipe.local.server import LocalServer
from promptpipe.local.signing import twilio_form, twilio_signature
from promptpipe.models.audit import UNNAMED_CALLER
from promptpipe.models.messaging import OutboundKind
from tests.browser.test_console_browser import SCREENSHOT_DIR, _click_and_load
from tests.browser.test_console_manage import (  # noqa: F401 - the fixtures are used by name, the skip by pytest
    COORDINATOR,
    _audit_rows,
    _preview_cohort,
    _submit,
    book,
    browser,
    console,
    pytestmark,
    webdriver,
)

if webdriver is not None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

TWILIO_URL = "https://localhost/webhooks/twilio"  # the address the local stack's signatures cover


def _names(driver: Any) -> list[str]:
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "table.people tbody th a")]


def _list(driver: Any, running: ConsoleServer, *, q: str = "", zone: str = "", sort: str = "") -> list[str]:
    """The list, searched, narrowed to a zone and sorted through its own form."""
    driver.get(running.url + "/")
    driver.find_element(By.ID, "q").send_keys(q)
    driver.find_element(By.ID, "zone").send_keys(zone)
    if sort:
        Select(driver.find_element(By.ID, "sort")).select_by_visible_text(sort)
    _click_and_load(driver, driver.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    return _names(driver)


def _provider_reports_undelivered(server: LocalServer, to: str, sid: str, code: str) -> None:
    """A signed Twilio status callback, as Twilio posts it when the carrier did not deliver."""
    params = {
        "MessageSid": sid,
        "AccountSid": "AC1",
        "From": "+14155550000",
        "To": to,
        "MessageStatus": "undelivered",
        "ErrorCode": code,
    }
    signature = twilio_signature(TWILIO_URL, params, server.env.settings.twilio_auth_token or "")
    answer = server.env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(params),
        headers={"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature},
        base64_body=True,
    )
    assert answer.status == 200, answer.body


def test_a_coordinators_day_from_enrolment_to_the_audit(
    browser: Any,  # noqa: F811
    console: ConsoleServer,  # noqa: F811
    stack: tuple[LocalServer, str],
    tmp_path: Path,
) -> None:
    server, sam = stack
    client = console.console.client
    shots = SCREENSHOT_DIR / "console-done-when"
    shots.mkdir(parents=True, exist_ok=True)

    # 1. Enrol one participant with the form
    browser.get(console.url + "/")
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Enrol"))
    browser.find_element(By.ID, "phone_number").send_keys("+1 604 555 0177")
    browser.find_element(By.ID, "name").send_keys("Rita")
    browser.find_element(By.ID, "timezone").send_keys("America/Vancouver")
    _submit(browser, "form.manage")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rita"
    rita = urlsplit(browser.current_url).path.split("/")[-1]
    assert client.participant(rita).timezone == "America/Vancouver"

    # 2. Import 50 rows with 3 bad: the preview names the 3 and writes nothing; confirmed, the 47 land
    _preview_cohort(browser, console, tmp_path)
    assert _names_in(client, "Cohort") == set()
    browser.save_screenshot(str(shots / "import-preview.png"))
    _submit(browser, "form.manage")
    assert "47 enrolled." in browser.find_element(By.ID, "import-result").text
    listed = _list(browser, console, q="Cohort")
    assert len(listed) == 47 and {"Cohort 5", "Cohort 20", "Cohort 41"}.isdisjoint(listed)
    assert {f"Cohort {n}" for n in range(1, 51)} - set(listed) == {"Cohort 5", "Cohort 20", "Cohort 41"}

    # 3. Edit Sam's zone: the live daily schedule moves to the same local time in Madrid
    schedule = client.state(sam)["schedules"][0]  # type: ignore[index]
    before = server.env.app.timers.describe(schedule["timer_id"])
    assert before is not None and before.timezone == "America/Toronto"
    browser.get(f"{console.url}/participants/{sam}/edit")
    zone = browser.find_element(By.ID, "timezone")
    zone.clear()
    zone.send_keys("Europe/Madrid")
    browser.find_element(By.ID, "reason").send_keys("moved to Madrid")
    _submit(browser, "form.manage")
    after = server.env.app.timers.describe(schedule["timer_id"])
    assert after is not None and (after.expression, after.timezone) == (before.expression, "Europe/Madrid")
    assert "(Europe/Madrid)" in browser.find_element(By.CSS_SELECTOR, "[aria-labelledby=schedules-h]").text

    # 4. A staff message reaches the outbox, and the coach is held
    text = "Hi Sam, Ana from the study team here. How is the new city?"
    browser.find_element(By.ID, "staff-body").send_keys(text)
    _submit(browser, "form.staff")
    staff = server.env.outbox.messages()[-1]
    assert (staff.kind, staff.body, staff.participant_id) == (OutboundKind.STAFF, text, sam)
    assert "On hold (staff)" in browser.find_element(By.ID, "hold-line").text
    assert client.state(sam)["hold"]["reason"] == "staff"  # type: ignore[index]

    # 5. Release, with a note
    browser.find_element(By.CSS_SELECTOR, "form.release summary").click()
    browser.find_element(By.ID, "release-note").send_keys("talked it through")
    _submit(browser, "form.release")
    assert "Released" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    assert client.state(sam)["hold"] is None  # type: ignore[index]

    # 6. The carrier did not deliver the staff message: the page reads the failure in plain words
    _provider_reports_undelivered(server, staff.to, staff.provider_message_id, "30007")
    browser.get(f"{console.url}/participants/{sam}")
    failed = browser.find_element(By.CSS_SELECTOR, "li[data-kind=staff] .delivery.outcome-failed")
    assert failed.text.startswith("failed: the carrier filtered the message as spam (provider code 30007)")
    assert "30007" not in failed.text.replace("(provider code 30007)", "")  # never the bare code
    browser.execute_script("arguments[0].scrollIntoView()", failed)
    browser.save_screenshot(str(shots / "failed-delivery.png"))

    # 7. Sort and filter the list
    oldest = _list(browser, console, sort="enrolment date (oldest first)")
    assert oldest[0] == "Sam" and len(oldest) == 49  # the demo's Sam first; Rita and the 47 after
    assert _list(browser, console)[-1] == "Sam"  # newest first: Sam last
    assert _list(browser, console, zone="Europe/Madrid") == ["Sam"]
    assert _list(browser, console, zone="America/Vancouver") == ["Rita"]
    browser.save_screenshot(str(shots / "list-filtered.png"))

    # 8. Every action in the audit: who (the signing principal: none locally), for whom, and why
    browser.get(f"{console.url}/participants/{sam}")
    rows = [(r["action"], r["who"], r["named"], r["why"]) for r in _audit_rows(browser)]
    assert rows[:3] == [
        ("release", UNNAMED_CALLER, COORDINATOR, "talked it through"),
        ("staff message", UNNAMED_CALLER, COORDINATOR, "—"),
        ("edit", UNNAMED_CALLER, COORDINATOR, "moved to Madrid"),
    ]
    browser.save_screenshot(str(shots / "audit.png"))
    browser.get(f"{console.url}/participants/{rita}")
    assert [(r["action"], r["who"], r["named"]) for r in _audit_rows(browser)] == [
        ("enrol", UNNAMED_CALLER, COORDINATOR)
    ]
    enrolled = {r.participant_id for r in client.audit() if r.action.value == "enrol" and r.named == COORDINATOR}
    cohort = {p.id for p in client.participants() if p.name.startswith("Cohort ")}
    assert len(cohort) == 47 and cohort | {rita} <= enrolled


def _names_in(client: Any, prefix: str) -> set[str]:
    return {p.name for p in client.participants() if p.name.startswith(prefix)}
