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
from promptpipe.coordinator.client import ApiAnswer, CoordinatorClient
from promptpipe.local.demo import DEMO_START, run_demo
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # pragma: no cover - the dev extra installs it
    webdriver = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    webdriver is None or CHROMIUM is None or CHROMEDRIVER is None,
    reason="browser tests need chromium and chromium-driver (apt-get install chromium chromium-driver) and selenium",
)


@pytest.fixture(autouse=True)
def _quiet_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_TRACE_DISABLED"):
        monkeypatch.setenv(name, "true" if name != "POWERTOOLS_LOG_LEVEL" else "ERROR")


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[LocalServer, str]]:
    """`promptpipe serve --with-demo`: the local server with the demo week played."""
    env = LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True, openai_api_key=None))
    pid = run_demo(env).participant_id
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    yield server, pid
    server.stop()


@pytest.fixture(scope="module")
def console(stack: tuple[LocalServer, str]) -> Iterator[ConsoleServer]:
    transport = HttpTransport(stack[0].url)
    running = ConsoleServer(CoordinatorClient(transport), port=0).start()
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
    ARTIFACTS.mkdir(exist_ok=True)
    yield driver
    driver.quit()


def _click_and_load(driver: Any, element: Any) -> None:
    """Click something that loads a new page and wait until the new page has replaced the old one."""
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, 60, poll_frequency=0.1).until(expected_conditions.staleness_of(old))
    WebDriverWait(driver, 60, poll_frequency=0.1).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )


def _shot(driver: Any, name: str) -> Path:
    path = ARTIFACTS / f"console-{name}.png"
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
    assert cells["Last reply"] == "Thu 05 Mar 07:36"  # Toronto time, not UTC
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
    assert "fixed at 07:30 (America/Toronto)" in schedules
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


def test_export_downloads_the_three_files(browser: Any, console: ConsoleServer, downloads: Path) -> None:
    browser.get(console.url + "/export")
    browser.find_element(By.XPATH, "//button[text()='Download the export']").click()
    WebDriverWait(browser, 60, poll_frequency=0.2).until(
        lambda _d: [p for p in downloads.glob("promptpipe-export-*.zip") if p.stat().st_size > 0]
    )
    archive = zipfile.ZipFile(next(downloads.glob("promptpipe-export-*.zip")))
    assert sorted(archive.namelist()) == ["messages.jsonl", "participants.csv", "prompts.csv"]
    people = list(csv.DictReader(io.StringIO(archive.read("participants.csv").decode())))
    assert [(p["name"], p["prompts_sent"], p["done"]) for p in people] == [("Sam", "4", "2")]
    _shot(browser, "export")


class _HoldingTransport:
    """The local API, with the state view showing a flow-controller hold (a hand-off waiting for a
    person), recording the override the console sends."""

    def __init__(self, inner: HttpTransport) -> None:
        self.inner = inner
        self.description = inner.description
        self.overrides: list[Any] = []

    def request(self, method: str, path: str, *, query: Any = None, json_body: Any = None) -> ApiAnswer:
        if method == "POST" and path.endswith("/state"):
            self.overrides.append(json_body)
            return ApiAnswer(200, {"status": "ok", "result": {}})
        answer = self.inner.request(method, path, query=query, json_body=json_body)
        if method == "GET" and path.endswith("/state") and answer.status == 200 and not self.overrides:
            answer.body["result"]["controller"] = {"hold": {"kind": "HANDOFF", "reason": "asked for a person"}}
        return answer


def test_a_hand_off_is_flagged_and_resolved_with_a_note(browser: Any, stack: tuple[LocalServer, str]) -> None:
    server, pid = stack
    transport = _HoldingTransport(HttpTransport(server.url))
    running = ConsoleServer(CoordinatorClient(transport), port=0).start()
    try:
        browser.get(running.url + "/")
        row = browser.find_element(By.CSS_SELECTOR, "table.people tbody tr")
        assert row.find_element(By.CSS_SELECTOR, "td[data-label='Needs a person']").text == "yes"
        browser.get(f"{running.url}/participants/{pid}")
        assert "needs a person" in browser.find_element(By.CSS_SELECTOR, ".sub").text
        browser.find_element(By.ID, "note").send_keys("Called Sam; all fine.")
        _shot(browser, "handoff")
        _click_and_load(browser, browser.find_element(By.XPATH, "//button[text()='Resolve hand-off']"))
        assert browser.find_element(By.CSS_SELECTOR, "[role=status]").text.startswith("Hand-off resolved")
        assert transport.overrides == [{"resolve_handoff": True, "reason": "Called Sam; all fine."}]
        assert "needs a person" not in browser.find_element(By.CSS_SELECTOR, ".sub").text
    finally:
        running.stop()
        transport.inner.close()


def test_a_form_without_the_console_token_is_refused(console: ConsoleServer, stack: tuple[LocalServer, str]) -> None:
    import httpx

    server, pid = stack
    answer = httpx.post(f"{console.url}/participants/{pid}/pause", data={"token": "forged"})
    assert answer.status_code == 403
    assert server.env.api("GET", f"/conversation/participants/{pid}").body["result"]["status"] == "active"


def test_swagger_ui_on_the_local_server_lists_every_operation(browser: Any, stack: tuple[LocalServer, str]) -> None:
    server, _pid = stack
    browser.get(server.url + "/docs")
    WebDriverWait(browser, 60, poll_frequency=0.2).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock")) == 8
    )
    summaries = {e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
    assert "/conversation/participants/{participant_id}/history" in {s.replace("\u200b", "") for s in summaries}
    _shot(browser, "swagger-ui")
