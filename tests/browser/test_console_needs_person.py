"""Nobody missed, in a real browser (docs/console.md, "Nobody missed"): a participant who asks for a
person is at the top of the console's front page, with the reason and how long they have waited, a
link to their page; releasing the hold there takes them off. Headless Chromium against `promptpipe
serve`'s local stack with the demo week played (run with ``-n 0`` or ``--dist loadfile``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.api_http import HttpTransport
from promptpipe.console.app import ConsoleServer
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.server import LocalServer
from promptpipe.local.signing import twilio_form, twilio_signature

SCREENSHOT_DIR = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ROSA = "+12125550163"

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
def console(stack: tuple[LocalServer, str], browser: Any) -> Iterator[ConsoleServer]:
    transport = HttpTransport(stack[0].url)
    running = ConsoleServer(CoordinatorClient(transport), port=0).start()
    browser.get(running.login_url)  # the address printed at start, with the token; the cookie holds it
    yield running
    running.stop()
    transport.close()


def _ask_for_a_person(server: LocalServer) -> str:
    """Rosa enrols and texts that she wants to talk to a person (the signed Twilio webhook)."""
    env = server.env
    enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": ROSA, "name": "Rosa"})
    assert enrolled.status == 201, enrolled.body
    params = {"MessageSid": "SM-ask-1", "AccountSid": "AC1", "From": ROSA, "To": "+14155550000"}
    params["Body"] = "can i talk to a real person please"
    signature = twilio_signature("https://localhost/webhooks/twilio", params, env.settings.twilio_auth_token)
    answer = env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(params),
        headers={"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature},
        base64_body=True,
    )
    assert answer.status == 200
    pid = str(enrolled.body["result"]["id"])
    assert env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["hold"]["reason"] == "asked"
    return pid


def _click_and_load(driver: Any, element: Any) -> None:
    """Click what loads a new page, and wait until it has replaced the old one (its window mark gone)."""
    driver.execute_script("window.promptpipeOldPage = true")
    element.click()
    WebDriverWait(driver, 60, poll_frequency=0.1, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(
            "return window.promptpipeOldPage === undefined && document.readyState === 'complete'"
        )
    )


def _queue_rows(driver: Any) -> list[dict[str, str]]:
    rows = driver.find_elements(By.CSS_SELECTOR, "#needs-a-person table tbody tr")
    return [
        {"name": row.find_element(By.TAG_NAME, "a").text}
        | {td.get_attribute("data-label"): td.text for td in row.find_elements(By.TAG_NAME, "td")}
        for row in rows
    ]


def test_a_held_participant_is_at_the_top_of_the_front_page_until_released(
    browser: Any, console: ConsoleServer, stack: tuple[LocalServer, str]
) -> None:
    server, _sam = stack
    browser.get(console.url + "/")
    assert "Nobody is waiting for a person." in browser.find_element(By.ID, "needs-a-person").text

    # Given Rosa asks for a person, and 1 h 15 min pass on the stack's clock
    pid = _ask_for_a_person(server)
    server.env.advance(timedelta(minutes=75))

    # Then the front page shows her first, above the list, with the reason and the wait
    browser.get(console.url + "/")
    main = browser.find_element(By.TAG_NAME, "main")
    first = main.find_elements(By.XPATH, "./*[not(self::p[@role='status'])]")[0]
    assert first.get_attribute("id") == "needs-a-person"
    assert browser.find_element(By.CSS_SELECTOR, "#needs-a-person .badge").text == "1"
    [row] = _queue_rows(browser)
    assert (row["name"], row["Reason"], row["Waiting"]) == ("Rosa", "asked for a person", "1 h 15 min")
    assert row["Since"].endswith(" UTC")
    SCREENSHOT_DIR.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOT_DIR / "console-needs-person-front.png"))

    # When the coordinator opens her page from the queue and releases the hold
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "#needs-a-person a[href$='" + pid + "']"))
    assert browser.current_url.endswith(f"/participants/{pid}")
    browser.find_element(By.ID, "release-note").send_keys("Called Rosa; she is fine.")
    _click_and_load(browser, browser.find_element(By.XPATH, "//button[starts-with(text(), 'Release')]"))

    # Then the front page no longer lists her, and the API agrees
    browser.get(console.url + "/")
    assert _queue_rows(browser) == []
    assert "Nobody is waiting for a person." in browser.find_element(By.ID, "needs-a-person").text
    assert server.env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["hold"] is None
