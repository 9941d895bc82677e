"""The console runs a study, checked from outside in headless Chromium (docs/console.md): the
needs-a-person queue, a failed delivery read with its meaning, the list sorted and filtered. Each
test saves a screenshot in tests/artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from promptpipe.console.app import ConsoleServer
from tests.browser.test_console_a11y import pages  # noqa: F401
from tests.browser.test_console_browser import (  # noqa: F401
    CHROMEDRIVER,
    CHROMIUM,
    _click_and_load,
    _shot,
    browser,
    downloads,
    webdriver,
)

if webdriver is not None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

pytestmark = pytest.mark.skipif(
    webdriver is None or CHROMIUM is None or CHROMEDRIVER is None,
    reason="browser tests need chromium and chromium-driver (apt-get install chromium chromium-driver) and selenium",
)

Pages = tuple[ConsoleServer, dict[str, str]]


def _names(driver: Any) -> list[str]:
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "table.people tbody th a")]


def test_the_queue_lists_who_needs_a_person_why_and_how_long(browser: Any, pages: Pages) -> None:  # noqa: F811
    console, ids = pages
    browser.get(console.login_url)
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Needs a person"))
    assert browser.find_element(By.CSS_SELECTOR, "h1 .count").text == "2"
    rows = {
        row.find_element(By.CSS_SELECTOR, "th a").text: {
            td.get_attribute("data-label"): td.text for td in row.find_elements(By.TAG_NAME, "td")
        }
        for row in browser.find_elements(By.CSS_SELECTOR, "table.queue tbody tr")
    }
    assert set(rows) == {"Alex", "Rosa"}  # Sam is not held
    assert rows["Alex"]["Reason"] == "repeated failure" and rows["Rosa"]["Reason"] == "asked for a person"
    assert all(r["Waiting"].endswith(("min", " h", "h 00 min")) or "day" in r["Waiting"] for r in rows.values())
    _shot(browser, "queue")
    _click_and_load(browser, browser.find_element(By.LINK_TEXT, "Rosa"))
    assert browser.current_url.endswith(f"/participants/{ids['asked']}")
    assert "needs a person (asked)" in browser.find_element(By.CSS_SELECTOR, ".sub").text


def test_a_failed_delivery_reads_with_its_meaning(browser: Any, pages: Pages) -> None:  # noqa: F811
    console, ids = pages
    browser.get(console.login_url)
    browser.get(f"{console.url}/participants/{ids['sam']}")
    failed = browser.find_element(By.CSS_SELECTOR, "li.msg .delivery.outcome-failed")
    assert failed.text.startswith("failed: the carrier filtered the message as spam (provider code 30007)")
    assert "free text" in failed.text
    skipped = browser.find_element(By.CSS_SELECTOR, "li.msg .delivery.outcome-skipped")
    assert skipped.text.startswith(
        "skipped: WhatsApp's 24-hour window was closed and no template is set up for this kind of message"
    )
    assert "outside_window_no_template" not in browser.page_source
    sent = browser.find_elements(By.CSS_SELECTOR, "li.msg .delivery.outcome-sent")
    assert sent and "local outbox" in sent[0].text and "segment" in sent[0].text
    costs = browser.find_element(By.CSS_SELECTOR, "table.costs")
    assert "All days" in costs.text and "unpriced" in costs.text
    browser.execute_script("arguments[0].scrollIntoView()", failed)
    _shot(browser, "delivery")


def test_the_list_sorts_and_filters(browser: Any, pages: Pages) -> None:  # noqa: F811
    console, _ids = pages
    browser.get(console.login_url)
    browser.get(console.url + "/")
    names = _names(browser)
    assert names[-1] == "Sam" and set(names[:2]) == {"Alex", "Rosa"}  # newest enrolled first (Alex, Rosa: one instant)
    Select(browser.find_element(By.ID, "sort")).select_by_visible_text("enrolment date (oldest first)")
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    names = _names(browser)
    assert names[0] == "Sam" and set(names[1:]) == {"Alex", "Rosa"}
    Select(browser.find_element(By.ID, "adherence")).select_by_visible_text("50–79 %")
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    assert _names(browser) == ["Sam"]  # 2 of 4 prompts done
    assert "sort=enrolled_oldest" in browser.current_url and "adherence=mid" in browser.current_url
    Select(browser.find_element(By.ID, "adherence")).select_by_visible_text("no prompt yet")
    browser.find_element(By.ID, "day_from").send_keys("1")
    browser.find_element(By.ID, "day_to").send_keys("3")
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    assert sorted(_names(browser)) == ["Alex", "Rosa"]  # enrolled today: study day 1, no prompt yet
    browser.find_element(By.CSS_SELECTOR, "input[name=needs]").click()
    _click_and_load(browser, browser.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    assert sorted(_names(browser)) == ["Alex", "Rosa"]  # both held
    _shot(browser, "list-filtered")
