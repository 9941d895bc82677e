"""The console in a real browser: headless Chromium (Debian's package) driven by Selenium, against
`promptpipe serve`'s local stack with the demo participant's week played. Each test loads a page,
acts, checks the result and saves a screenshot in tests/artifacts/."""

from __future__ import annotations

import csv
import io
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.api_http import HttpTransport
from promptpipe.console.app import ConsoleServer
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.server import LocalServer
from tests.support import hand_off_a_new_participant

SCREENSHOT_DIR = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the dev extra installs it
    webdriver = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    webdriver is None or CHROMIUM is None or CHROMEDRIVER is None,
    reason="browser tests need chromium and chromium-driver (apt-get install chromium chromium-driver) and selenium",
)


@pytest.fixture(scope="module")
def console(stack: tuple[LocalServer, str], browser: Any) -> Iterator[ConsoleServer]:
    transport = HttpTransport(stack[0].url)
    running = ConsoleServer(CoordinatorClient(transport), port=0).start()
    # As a coordinator does: the address printed at start, with the token; the cookie then holds it.
    browser.get(running.login_url)
    assert browser.current_url == running.url + "/"  # the token left the address bar
    yield running
    running.stop()
    transport.close()


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    options.add_experimental_option(
        "prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False}
    )
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    yield driver
    driver.quit()


def _click_and_load(driver: Any, element: Any) -> None:
    """Click something that loads a new page and wait until the new page has replaced the old one: the
    old page's window carries a mark that a new page's does not. Asking while the old page goes can
    fail in more ways than a stale element (Chromium: "Node with given id does not belong to the
    document", seen on a loaded machine), so a failed reading is read again, not a failure."""
    driver.execute_script("window.promptpipeOldPage = true")
    element.click()
    WebDriverWait(driver, 60, poll_frequency=0.1, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.promptpipeOldPage === undefined && document.readyState === 'complete'"
        )
    )


def _shot(driver: Any, name: str) -> Path:
    path = SCREENSHOT_DIR / f"console-{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 1000
    return path


def test_participants_page_finds_the_demo_participant_by_phone(browser: Any, console: ConsoleServer) -> None:
    browser.get(console.url + "/")
    assert browser.title == "Participants — PromptPipe console"
    box = browser.find_element(By.ID, "q")
    box.send_keys("416 555 0142")
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    rows = browser.find_elements(By.CSS_SELECTOR, "table.people tbody tr")
    assert len(rows) == 1
    cells = {td.get_attribute("data-label"): td.text for td in rows[0].find_elements(By.TAG_NAME, "td")}
    assert rows[0].find_element(By.TAG_NAME, "a").text == "Sam"
    assert cells["Sub-state"] == "FEEDBACK"
    assert cells["Prompts sent"] == "4"
    assert cells["Done"] == "2 (50%)"
    assert cells["Last reply"] == "Thu 05 Mar 07:36 EST"  # Toronto time, not UTC, the zone named
    assert cells["Zone"] == "America/Toronto"
    _shot(browser, "participants")
    box = browser.find_element(By.ID, "q")
    box.clear()
    box.send_keys("nobody")
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    assert "No participant matches." in browser.find_element(By.TAG_NAME, "main").text


def test_participant_page_shows_the_week_in_local_time(browser: Any, console: ConsoleServer) -> None:
    browser.get(console.url + "/")
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Sam"))
    assert "times in America/Toronto" in browser.find_element(By.CSS_SELECTOR, ".sub").text
    days = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h3.day")]
    assert days[:2] == ["Monday 02 March 2026", "Tuesday 03 March 2026"]
    prompts = browser.find_elements(By.CSS_SELECTOR, "li.msg.prompt")
    assert len(prompts) == 4
    assert {p.find_element(By.TAG_NAME, "time").text for p in prompts} == {"07:20"}
    assert prompts[0].find_element(By.CSS_SELECTOR, ".mark").text == "daily prompt"
    answers = [m.text for m in browser.find_elements(By.CSS_SELECTOR, "li.msg.participant .mark")]
    assert answers.count("answer: Done") == 2
    assert len(browser.find_elements(By.CSS_SELECTOR, "li.msg.reminder")) == 1
    schedules = browser.find_element(By.ID, "schedules-h").find_element(By.XPATH, "..").text
    assert "fixed at 07:30 (America/Toronto): the prompt goes out at 07:20, prepared 10 min ahead" in schedules
    _shot(browser, "participant")
    browser.execute_script("arguments[0].scrollIntoView()", browser.find_elements(By.CSS_SELECTOR, "h3.day")[1])
    _shot(browser, "conversation")
    # On a phone screen nothing overflows sideways.
    browser.set_window_size(390, 844)
    try:
        overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        _shot(browser, "participant-phone")
    finally:
        browser.set_window_size(1280, 900)


def test_pause_and_resume_change_the_participant_through_the_api(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str]
) -> None:
    server, pid = stack
    browser.get(f"{console.url}/participants/{pid}")
    _click_and_load(browser, browser.find_element(By.XPATH, "//button[text()='Pause']"))
    assert browser.find_element(By.CSS_SELECTOR, "[role=status]").text.startswith("Paused")
    assert browser.find_element(By.CSS_SELECTOR, ".sub .status").text == "paused"
    state = server.env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["status"] == "paused"
    assert server.env.api("GET", f"/conversation/participants/{pid}").body["result"]["status"] == "paused"
    _shot(browser, "paused")
    _click_and_load(browser, browser.find_element(By.XPATH, "//button[text()='Resume']"))
    assert browser.find_element(By.CSS_SELECTOR, "[role=status]").text.startswith("Resumed")
    assert server.env.api("GET", f"/conversation/participants/{pid}").body["result"]["status"] == "active"


def test_export_downloads_the_four_files(browser: Any, console: ConsoleServer, downloads: Path) -> None:
    browser.get(console.url + "/export")
    browser.find_element(By.XPATH, "//button[text()='Download the export']").click()
    WebDriverWait(browser, 60, poll_frequency=0.2).until(
        lambda _d: [p for p in downloads.glob("promptpipe-export-*.zip") if p.stat().st_size > 0]
    )
    archive = zipfile.ZipFile(next(downloads.glob("promptpipe-export-*.zip")))
    assert sorted(archive.namelist()) == [
        "adherence.csv",
        "audit.csv",
        "messages.jsonl",
        "participants.csv",
        "prompts.csv",
    ]
    people = list(csv.DictReader(io.StringIO(archive.read("participants.csv").decode())))
    assert [(p["name"], p["prompts_sent"], p["done"]) for p in people] == [("Sam", "4", "2")]
    _shot(browser, "export")


def test_a_form_without_the_console_token_is_refused(console: ConsoleServer, stack: tuple[LocalServer, str]) -> None:
    import httpx

    server, pid = stack
    answer = httpx.post(f"{console.url}/participants/{pid}/pause", data={"token": "forged"})
    assert answer.status_code == 403
    assert server.env.api("GET", f"/conversation/participants/{pid}").body["result"]["status"] == "active"


def test_swagger_ui_on_the_local_server_lists_every_operation(browser: Any, stack: tuple[LocalServer, str]) -> None:
    server, _pid = stack
    import json
    import urllib.request

    with urllib.request.urlopen(server.url + "/openapi.json", timeout=30) as answer:
        document = json.load(answer)
    operations = sum(len(item) for item in document["paths"].values())
    browser.get(server.url + "/docs")
    WebDriverWait(browser, 60, poll_frequency=0.2).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) == operations
    )
    summaries = {e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
    assert "/conversation/participants/{participant_id}/history" in {s.replace("\u200b", "") for s in summaries}
    _shot(browser, "swagger-ui")


def _hand_off_a_new_participant(server: LocalServer) -> str:
    """A real controller hold on the local stack: an intake flow whose first node hands off after one
    failed attempt is pushed, a participant enrolls and answers "idk" (docs/controller.md)."""
    env = server.env
    pid = hand_off_a_new_participant(env, HELD_PHONE)
    controller = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["controller"]
    assert controller["needs_person"] is True  # the API shows the hold before the console does
    return pid


HELD_PHONE = "+14165550177"


def test_a_hand_off_is_flagged_and_resolved_with_a_note(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str]
) -> None:
    # Given a participant the flow controller holds for a person (runs last: it adds a participant
    # and a flow version to the shared stack)
    server, _sam = stack
    pid = _hand_off_a_new_participant(server)

    # When the coordinator sees the flag, writes a note and resolves the hand-off in the console
    browser.get(console.url + "/")
    row = browser.find_element(By.XPATH, "//table[contains(@class,'people')]//tr[.//a[text()='Alex']]")
    assert row.find_element(By.CSS_SELECTOR, "td[data-label='Needs a person']").text == "yes (handoff)"
    sam = browser.find_element(By.XPATH, "//table[contains(@class,'people')]//tr[.//a[text()='Sam']]")
    assert sam.find_element(By.CSS_SELECTOR, "td[data-label='Needs a person']").text == "no"
    assert row.find_element(By.CSS_SELECTOR, ".badge").text == "needs a person (handoff)"
    browser.find_element(By.CSS_SELECTOR, "input[name=needs]").click()
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.people tbody th a")]
    assert names == ["Alex"]  # the needs-a-person filter
    browser.get(f"{console.url}/participants/{pid}")
    assert "needs a person" in browser.find_element(By.CSS_SELECTOR, ".sub").text
    browser.find_element(By.ID, "note").send_keys("Called Alex; they want to walk more.")
    chosen = browser.find_element(By.CSS_SELECTOR, "#sub_state option:checked")
    assert chosen.text == "INTAKE"  # the current sub-state is the default
    _shot(browser, "handoff")
    _click_and_load(browser, browser.find_element(By.XPATH, "//button[text()='Resolve hand-off']"))

    # Then the page says so and no longer flags the participant
    assert browser.find_element(By.CSS_SELECTOR, "[role=status]").text.startswith("Hand-off resolved")
    assert "needs a person" not in browser.find_element(By.CSS_SELECTOR, ".sub").text
    # And through the API: the hold is released, the sub-state kept, the note in the transcript
    state = server.env.api("GET", f"/conversation/participants/{pid}/state").body["result"]
    assert state["controller"]["needs_person"] is False
    assert state["sub_state"] == "INTAKE"
    history = server.env.api("GET", f"/conversation/participants/{pid}/history").body["result"]["messages"]
    overrides = [m["content"] for m in history if m["kind"] == "override"]
    assert overrides == [
        "operator override (sub_state=INTAKE, hold released (handoff)): Called Alex; they want to walk more."
    ]


def test_adherence_views_are_drawn_without_javascript(browser: Any, console: ConsoleServer) -> None:
    # The study chart: one latency bar and one day label per study day
    browser.get(console.url + "/")
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Study by day"))
    chart = browser.find_element(By.CSS_SELECTOR, "svg.study-chart")
    assert chart.get_attribute("role") == "img"
    assert len(chart.find_elements(By.CSS_SELECTOR, "rect.latency")) >= 4
    assert chart.find_elements(By.CSS_SELECTOR, "polyline.answered") and chart.find_elements(
        By.CSS_SELECTOR, "polyline.done"
    )
    assert not browser.find_elements(By.TAG_NAME, "script")
    _shot(browser, "study-chart")
    # Sam's strip: a square per study day, two of them done
    browser.get(console.url + "/")
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Sam"))
    strip = browser.find_element(By.CSS_SELECTOR, "svg.strip")
    days = strip.find_elements(By.TAG_NAME, "rect")
    assert len(days) >= 4
    assert len(strip.find_elements(By.CSS_SELECTOR, "rect.day-done")) == 2
    _shot(browser, "study-days")
