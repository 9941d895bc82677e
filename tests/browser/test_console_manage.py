"""The console runs a study, in a real browser (headless Chromium driven by Selenium) against
`promptpipe serve`'s local stack with the demo week played, signed in with a coordinator's own token
(docs/console.md): enrol one; import a CSV of 50 rows with 3 bad (the preview names the 3, the 47
land); edit a zone, then the preferred time (the next prompt moves); a staff message reaches the
outbox and holds the coach; release; pause, withdraw, delete and erase; and every action in the
audit with who and why, on the participant's page and in the export. A viewer reads and cannot
act. Screenshots in tests/artifacts/."""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from promptpipe.adapters.api_http import HttpTransport
from promptpipe.console.app import ConsoleServer
from promptpipe.console.identity import Role, TokenBook
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.server import LocalServer
from promptpipe.models.audit import UNNAMED_CALLER
from promptpipe.models.messaging import OutboundKind
from tests.browser.test_console_browser import CHROMEDRIVER, CHROMIUM, SCREENSHOT_DIR, _click_and_load

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the dev extra installs it
    webdriver = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    webdriver is None or CHROMIUM is None or CHROMEDRIVER is None,
    reason="browser tests need chromium and chromium-driver (apt-get install chromium chromium-driver) and selenium",
)

COORDINATOR = "Ana Coordinator"
NEW_PAGE = "return window.promptpipeOldPage === undefined && document.readyState === 'complete'"


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> tuple[TokenBook, str, str]:
    """Two coordinators' own tokens, as `promptpipe console-token add` makes them."""
    tokens = TokenBook(tmp_path_factory.mktemp("console") / "console-tokens.json")
    return tokens, tokens.add(COORDINATOR, Role.COORDINATOR), tokens.add("Vic Viewer", Role.VIEWER)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def console(stack: tuple[LocalServer, str], browser: Any, book: tuple[TokenBook, str, str]) -> Iterator[ConsoleServer]:
    transport = HttpTransport(stack[0].url)
    running = ConsoleServer(CoordinatorClient(transport), port=0, tokens=book[0]).start()
    # Ana opens the console's address with her own token: the cookie then holds it
    browser.get(f"{running.url}/?token={book[1]}")
    assert browser.current_url == running.url + "/"
    assert f"signed in as {COORDINATOR} (coordinator)" in browser.find_element(By.TAG_NAME, "footer").text
    yield running
    running.stop()
    transport.close()


def _shot(driver: Any, name: str) -> None:
    driver.save_screenshot(str(SCREENSHOT_DIR / f"console-manage-{name}.png"))


def _audit_rows(driver: Any) -> list[dict[str, str]]:
    rows = driver.find_elements(By.CSS_SELECTOR, "table.audit tbody tr")
    keys = ("when", "action", "who", "named", "why", "fields")
    return [dict(zip(keys, (td.text for td in row.find_elements(By.TAG_NAME, "td")), strict=True)) for row in rows]


def _submit(driver: Any, form_selector: str) -> None:
    _click_and_load(driver, driver.find_element(By.CSS_SELECTOR, f"{form_selector} button[type=submit]"))


def _labelled(driver: Any) -> None:
    """Every field of the page has a <label for> naming it (the forms are usable by keyboard and screen reader)."""
    unlabelled = driver.execute_script(
        "return [...document.querySelectorAll('input:not([type=hidden]), textarea, select')]"
        ".filter(e => !e.id || !document.querySelector(`label[for='${e.id}']`)).map(e => e.name)"
    )
    assert unlabelled == []


def test_enrol_one_participant(browser: Any, console: ConsoleServer) -> None:
    browser.get(console.url + "/")
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Enrol"))
    _labelled(browser)
    browser.find_element(By.ID, "phone_number").send_keys("+1 416 555 0177")
    browser.find_element(By.ID, "name").send_keys("Rita")
    browser.find_element(By.ID, "timezone").send_keys("America/Vancouver")
    _shot(browser, "enrol")
    _submit(browser, "form.manage")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rita"
    assert "Enrolled: the greeting is on its way." in browser.find_element(By.CSS_SELECTOR, ".notice").text
    pid = urlsplit(browser.current_url).path.split("/")[-1]
    assert console.console.client.participant(pid).timezone == "America/Vancouver"
    # who: the principal that signed the API call (none locally); the console's coordinator, as named
    assert [(r["action"], r["who"], r["named"]) for r in _audit_rows(browser)] == [
        ("enrol", UNNAMED_CALLER, COORDINATOR)
    ]


def test_a_participant_can_be_enrolled_by_keyboard_alone(browser: Any, console: ConsoleServer) -> None:
    """Tab from the top of the page to each field (its label names it), type, Enter submits."""
    browser.get(console.url + "/enrol")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    focused: list[str] = []
    for _ in range(30):
        active = browser.switch_to.active_element
        focused.append(active.get_attribute("id") or active.tag_name)
        if focused[-1] == "phone_number":
            break
        active.send_keys(Keys.TAB)
    assert focused[-1] == "phone_number", focused
    active.send_keys("+1 416 555 0188")
    active.send_keys(Keys.TAB)
    browser.switch_to.active_element.send_keys("Kay")  # the name, next in the tab order
    browser.execute_script("window.promptpipeOldPage = true")
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script(
            "return window.promptpipeOldPage === undefined && document.readyState === 'complete'"
        )
    )
    assert browser.find_element(By.TAG_NAME, "h1").text == "Kay"


def _cohort_csv(path: Path) -> Path:
    """50 rows; rows 5, 20 and 41 are bad: a number that is no number, a zone that is none, row 2's
    number again."""
    lines = ["phone_number,name,timezone"]
    for index in range(1, 51):
        phone, zone = f"+1 416 {300 + index:03d} {1000 + index:04d}", "America/Toronto"
        if index == 5:
            phone = "12"
        if index == 20:
            zone = "Mars/Olympus"
        if index == 41:
            phone = "+1 416 302 1002"
        lines.append(f"{phone},Cohort {index},{zone}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _preview_cohort(driver: Any, running: ConsoleServer, folder: Path) -> list[Any]:
    """The 50-row file imported: the preview names the 3 bad rows (their table rows, answered)."""
    driver.get(running.url + "/import")
    _labelled(driver)
    driver.find_element(By.ID, "csv").send_keys(str(_cohort_csv(folder / "cohort.csv")))
    _submit(driver, "form.manage")
    summary = driver.find_element(By.ID, "import-summary").text
    assert "50 rows read: 47 can be enrolled; 3 have problems (rows 5, 20, 41)" in summary
    bad = driver.find_elements(By.CSS_SELECTOR, "table.preview tr.bad")
    assert [row.get_attribute("data-row") for row in bad] == ["5", "20", "41"]
    return list(bad)


def test_import_a_cohort_of_50_with_3_bad_rows(browser: Any, console: ConsoleServer, tmp_path: Path) -> None:
    client = console.console.client
    before = len(client.participants())
    # The preview names the 3 bad rows and why; nothing is written yet
    bad = _preview_cohort(browser, console, tmp_path)
    assert "phone_number" in bad[0].text and "timezone" in bad[1].text and "same number as row 2" in bad[2].text
    assert len(client.participants()) == before
    _shot(browser, "import-preview")
    _submit(browser, "form.manage")
    assert "47 enrolled." in browser.find_element(By.ID, "import-result").text
    assert len(client.participants()) == before + 47
    names = {p.name for p in client.participants()}
    assert {"Cohort 5", "Cohort 20", "Cohort 41"}.isdisjoint(names) and "Cohort 50" in names


def test_edit_a_zone_and_the_next_prompt_moves(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str]
) -> None:
    server, pid = stack
    state = console.console.client.state(pid)
    assert state is not None and state["schedules"]
    schedule = state["schedules"][0]
    name = schedule["timer_id"]  # the EventBridge schedule's name
    assert server.env.app.timers.describe(name).timezone == "America/Toronto"  # type: ignore[union-attr]
    browser.get(f"{console.url}/participants/{pid}/edit")
    _labelled(browser)
    zone = browser.find_element(By.ID, "timezone")
    zone.clear()
    zone.send_keys("Europe/Madrid")
    browser.find_element(By.ID, "reason").send_keys("moved to Madrid")
    _submit(browser, "form.manage")
    assert "Saved" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    # The schedule was rebuilt by the API's update: the live one now fires at the same local time in Madrid
    assert "(Europe/Madrid)" in browser.find_element(By.CSS_SELECTOR, "[aria-labelledby=schedules-h]").text
    live = server.env.app.timers.describe(name)
    assert live is not None and live.timezone == "Europe/Madrid"
    edit = _audit_rows(browser)[0]
    assert (edit["action"], edit["named"], edit["why"], edit["fields"]) == (
        "edit",
        COORDINATOR,
        "moved to Madrid",
        "timezone",
    )


def test_edit_the_preferred_time_and_the_next_prompt_moves(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str]
) -> None:
    server, pid = stack
    state = console.console.client.state(pid)
    assert state is not None and state["schedules"]
    name = state["schedules"][0]["timer_id"]
    prep = server.env.settings.scheduler_prep_time_minutes
    before = server.env.app.timers.describe(name)
    assert before is not None and before.expression != f"cron({60 - prep} 6 * * ? *)"
    browser.get(f"{console.url}/participants/{pid}/edit")
    _labelled(browser)
    preferred = browser.find_element(By.ID, "preferred_time")
    preferred.clear()
    preferred.send_keys("7:00")
    browser.find_element(By.ID, "reason").send_keys("earlier shift")
    _submit(browser, "form.manage")
    assert "Saved" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    # The API's update moved the daily prompt: the live schedule (same name, no second one) fires at
    # 07:00 less the prep time in the participant's zone, and the state and the profile agree
    assert (
        "fixed at 07:00 (Europe/Madrid)" in browser.find_element(By.CSS_SELECTOR, "[aria-labelledby=schedules-h]").text
    )
    live = server.env.app.timers.describe(name)
    assert live is not None and (live.expression, live.timezone) == (f"cron({60 - prep} 6 * * ? *)", "Europe/Madrid")
    daily = [n for n in server.env.app.timers.list_names(f"{pid}-sched_") if not n.endswith("-r")]
    assert daily == [name]  # one daily schedule, moved in place
    state = console.console.client.state(pid)
    assert state is not None and state["profile"]["preferred_time"] == "07:00"
    assert [s["fixed_time"] for s in state["schedules"]] == ["07:00"]
    edit = _audit_rows(browser)[0]
    assert (edit["action"], edit["named"], edit["why"], edit["fields"]) == (
        "edit",
        COORDINATOR,
        "earlier shift",
        "preferred_time",
    )
    _shot(browser, "edit-preferred-time")


def test_a_staff_message_reaches_the_outbox_and_holds_the_coach_then_release(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str]
) -> None:
    server, pid = stack
    browser.get(f"{console.url}/participants/{pid}")
    _labelled(browser)
    browser.find_element(By.ID, "staff-body").send_keys("Hi Sam, this is Ana from the study team. How is it going?")
    _submit(browser, "form.staff")
    assert "the coach is held" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    last = server.env.outbox.messages()[-1]
    assert (last.kind, last.body) == (OutboundKind.STAFF, "Hi Sam, this is Ana from the study team. How is it going?")
    assert "On hold (staff)" in browser.find_element(By.ID, "hold-line").text
    staff_lines = browser.find_elements(By.CSS_SELECTOR, "li[data-kind=staff]")
    assert staff_lines and f"study team: {COORDINATOR}" in staff_lines[-1].text
    state = console.console.client.state(pid)
    assert state is not None and state["hold"]["reason"] == "staff"
    _shot(browser, "staff-message")
    # Release, correcting the preferred time the coach will continue from
    browser.find_element(By.CSS_SELECTOR, "form.release summary").click()
    preferred = browser.find_element(By.ID, "release-preferred_time")
    preferred.clear()
    preferred.send_keys("19:00")
    browser.find_element(By.ID, "release-note").send_keys("talked it through")
    _submit(browser, "form.release")
    assert "Released" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    state = console.console.client.state(pid)
    assert state is not None and state["hold"] is None and state["profile"]["preferred_time"] == "19:00"
    rows = _audit_rows(browser)
    assert (rows[0]["action"], rows[0]["named"], rows[0]["why"]) == ("release", COORDINATOR, "talked it through")
    # the corrected time went through the update, which moves the daily prompt with it
    assert (rows[1]["action"], rows[1]["named"], rows[1]["why"]) == ("edit", COORDINATOR, "corrected at release")
    assert (rows[2]["action"], rows[2]["named"]) == ("staff message", COORDINATOR)


def test_pause_withdraw_delete_erase_and_export_are_in_the_audit_with_who_and_why(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str], tmp_path: Path
) -> None:
    client = console.console.client
    _, pid = stack
    browser.get(f"{console.url}/participants/{pid}")
    browser.find_element(By.ID, "pause-reason").send_keys("on holiday for a week")
    _click_and_load(browser, browser.find_element(By.XPATH, "//button[text()='Pause']"))
    assert _audit_rows(browser)[0]["why"] == "on holiday for a week"
    # Withdraw, delete and erase three of the cohort
    cohort = {p.name: p.id for p in client.participants() if p.name.startswith("Cohort ")}
    browser.get(f"{console.url}/participants/{cohort['Cohort 1']}/withdraw")
    _labelled(browser)
    browser.find_element(By.ID, "reason").send_keys("moved abroad")
    _submit(browser, "form.manage")
    assert client.participant(cohort["Cohort 1"]).status.value == "withdrawn"
    assert (_audit_rows(browser)[0]["action"], _audit_rows(browser)[0]["why"]) == ("withdraw", "moved abroad")
    browser.get(f"{console.url}/participants/{cohort['Cohort 2']}/delete")
    _submit(browser, "form.manage")
    assert "Deleted" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    browser.get(f"{console.url}/participants/{cohort['Cohort 3']}/erase")
    _labelled(browser)
    browser.find_element(By.ID, "confirm").send_keys("Cohort 4")  # not their name: nothing erased
    _submit(browser, "form.manage")
    assert "type the participant's name exactly" in browser.find_element(By.TAG_NAME, "main").text
    assert client.participant(cohort["Cohort 3"]).name == "Cohort 3"
    browser.get(f"{console.url}/participants/{cohort['Cohort 3']}/erase")
    browser.find_element(By.ID, "confirm").send_keys("Cohort 3")
    browser.find_element(By.ID, "reason").send_keys("asked to be forgotten")
    _submit(browser, "form.manage")
    assert "Erased" in browser.find_element(By.CSS_SELECTOR, ".notice").text
    # The erasure's record survives it, without the erased data
    erased = [r for r in client.audit(cohort["Cohort 3"]) if r.action.value == "erasure"]
    assert len(erased) == 1 and erased[0].named == COORDINATOR and "Cohort" not in erased[0].model_dump_json()
    # The export holds the audit file, every action with who and why
    cookie = browser.get_cookie(console.console.cookie_name)["value"]
    browser.get(console.url + "/export")
    token = browser.find_element(By.CSS_SELECTOR, "input[name=token]").get_attribute("value")
    answer = httpx.post(
        console.url + "/export",
        data={"token": token},
        cookies={console.console.cookie_name: cookie},
        headers={"origin": console.url},
        timeout=120,
    )
    assert answer.status_code == 200, answer.text
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        rows = list(csv.DictReader(io.StringIO(archive.read("audit.csv").decode())))
    done = {(r["participant_id"], r["action"]): r for r in rows}
    assert done[(pid, "pause")]["named"] == COORDINATOR and done[(pid, "pause")]["reason"] == "on holiday for a week"
    for action in ("enrol", "edit", "staff_message", "release", "pause"):
        assert (pid, action) in done or action == "enrol", action
    assert done[(cohort["Cohort 1"], "withdraw")]["reason"] == "moved abroad"
    assert (cohort["Cohort 2"], "delete") in done and (cohort["Cohort 3"], "erasure") in done
    assert [r for r in client.audit() if r.action.value == "export"][-1].named == COORDINATOR
    _shot(browser, "audit")


def test_a_viewer_reads_every_page_and_can_act_on_none(
    console: ConsoleServer, stack: tuple[LocalServer, str], book: tuple[TokenBook, str, str]
) -> None:
    _, pid = stack
    viewer = {"authorization": f"token {book[2]}"}
    page = httpx.get(f"{console.url}/participants/{pid}", headers=viewer, timeout=60)
    assert page.status_code == 200 and "Vic Viewer has the viewer role" in page.text
    assert 'form method="post" action="/participants/' not in page.text
    marker = 'name="token" value="'
    token = page.text[page.text.index(marker) + len(marker) :].split('"', 1)[0] if marker in page.text else "none"
    cookie = page.headers["set-cookie"].split(";", 1)[0]
    for path in (f"/participants/{pid}/resume", f"/participants/{pid}/staff", "/export", f"/participants/{pid}/delete"):
        answer = httpx.post(
            console.url + path,
            data={"token": token, "body": "hi"},
            headers={"cookie": cookie, "origin": console.url},
            timeout=60,
        )
        assert answer.status_code == 403, path
    assert console.console.client.participant(pid).status.value == "paused"  # unchanged by the viewer
    export = httpx.get(f"{console.url}/export", headers=viewer, timeout=60)
    assert "the export is for coordinators" in export.text and 'action="/export"' not in export.text
