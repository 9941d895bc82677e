"""Nobody missed, in a real browser (docs/console.md, "Nobody missed"): a participant who asks for a
person is at the top of the console's front page, with the reason and how long they have waited, a
link to their page; releasing the hold there takes them off. Headless Chromium against `promptpipe
serve`'s local stack with the demo week played (run with ``-n 0`` or ``--dist loadfile``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from promptpipe.console.app import ConsoleServer
from promptpipe.local.server import LocalServer
from tests.browser import test_console_browser as chromium
from tests.browser.test_console_browser import (  # the same headless Chromium and signed-in console
    browser,  # noqa: F401 - a fixture
    console,  # noqa: F401 - a fixture
    downloads,  # noqa: F401 - a fixture
    pytestmark,  # noqa: F401 - skipped where Chromium or selenium is not
)
from tests.support import text_over_webhook

ROSA = "+12125550163"


def _ask_for_a_person(server: LocalServer) -> str:
    """Rosa enrols and texts that she wants to talk to a person (the signed Twilio webhook)."""
    env = server.env
    enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": ROSA, "name": "Rosa"})
    assert enrolled.status == 201, enrolled.body
    text_over_webhook(env, ROSA, "can i talk to a real person please", "SM-ask-1")
    pid = str(enrolled.body["result"]["id"])
    assert env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["hold"]["reason"] == "asked"
    return pid


def _queue_rows(driver: Any) -> list[dict[str, str]]:
    By = chromium.By  # noqa: N806 - selenium's name
    rows = driver.find_elements(By.CSS_SELECTOR, "#needs-a-person table tbody tr")
    return [
        {"name": row.find_element(By.TAG_NAME, "a").text}
        | {td.get_attribute("data-label"): td.text for td in row.find_elements(By.TAG_NAME, "td")}
        for row in rows
    ]


def test_a_held_participant_is_at_the_top_of_the_front_page_until_released(
    browser: Any,  # noqa: F811 - the fixture imported above
    console: ConsoleServer,  # noqa: F811 - the fixture imported above
    stack: tuple[LocalServer, str],
) -> None:
    server, _sam = stack
    By = chromium.By  # noqa: N806 - selenium's name
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
    browser.save_screenshot(str(chromium.SCREENSHOT_DIR / "console-needs-person-front.png"))

    # When the coordinator opens her page from the queue and releases the hold
    chromium._click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "#needs-a-person a[href$='" + pid + "']"))
    assert browser.current_url.endswith(f"/participants/{pid}")
    browser.find_element(By.ID, "release-note").send_keys("Called Rosa; she is fine.")
    chromium._click_and_load(browser, browser.find_element(By.XPATH, "//button[starts-with(text(), 'Release')]"))

    # Then the front page no longer lists her, and the API agrees
    browser.get(console.url + "/")
    assert _queue_rows(browser) == []
    assert "Nobody is waiting for a person." in browser.find_element(By.ID, "needs-a-person").text
    assert server.env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["hold"] is None
