"""Every console page checked with axe-core in headless Chromium (WCAG 2.1 A and AA: labels and
names, contrast, keyboard and focus, structure): the list, its sorted and filtered form, the
needs-a-person queue, a participant with a failed and a skipped delivery, a held participant, the
study view, the export and an error page. A violation fails the test, naming the rule and the node.
Keyboard: every link and control of the list is reached with Tab, in order, and shows its focus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.api_http import HttpTransport
from promptpipe.console.app import ConsoleServer
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.demo import DEMO_START, run_demo
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer
from promptpipe.models.store import DeliveryOutcome, Direction
from tests.browser.axe import axe_source, violations
from tests.browser.test_console_browser import CHROMEDRIVER, CHROMIUM, browser, downloads, webdriver  # noqa: F401
from tests.browser.test_console_manage import _submit
from tests.support import hand_off_a_new_participant

if webdriver is not None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

pytestmark = pytest.mark.skipif(
    webdriver is None or CHROMIUM is None or CHROMEDRIVER is None,
    reason="browser tests need chromium and chromium-driver (apt-get install chromium chromium-driver) and selenium",
)


@pytest.fixture(scope="module")
def axe() -> str:
    source = axe_source()
    if source is None:
        pytest.skip("axe-core is missing: npm install --prefix .cache/axe axe-core (.ci/run does)")
    return source


def failed_delivery(env: LocalEnvironment, pid: str) -> None:
    """The demo's first two messages as a provider refused one and a closed window skipped the other."""
    history = CoordinatorClient(InProcessTransport(env)).iter_history(pid)
    entries = [e for e in history if e.direction is Direction.OUTBOUND][:2]
    failed, skipped = entries
    env.app.deliveries.record_outcomes(
        pid,
        failed.at,
        {failed.seq: DeliveryOutcome(status="failed", code="30007", reason="undelivered: x", at=failed.at)},
    )
    env.app.deliveries.record_outcomes(
        pid,
        skipped.at,
        {skipped.seq: DeliveryOutcome(status="skipped", reason="outside_window_no_template", at=skipped.at)},
    )


def ask_for_a_person(env: LocalEnvironment, phone: str) -> str:
    """A participant who enrols ("Rosa") and texts that they want a person, over the Twilio webhook."""
    from promptpipe.local.signing import twilio_form, twilio_signature

    enrolled = env.api("POST", "/conversation/participants", json_body={"phone_number": phone, "name": "Rosa"})
    assert enrolled.status == 201, enrolled.body
    params = {
        "MessageSid": "SM-ask-1",
        "AccountSid": "AC1",
        "From": phone,
        "To": "+14155550000",
        "Body": "can I talk to a real person pls",
    }
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
    hold = env.api("GET", f"/conversation/participants/{pid}/state").body["result"]["hold"]
    assert hold["reason"] == "asked", hold
    return pid


@pytest.fixture(scope="module")
def pages() -> Iterator[tuple[ConsoleServer, dict[str, str]]]:
    env = LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True, openai_api_key=None))
    sam = run_demo(env).participant_id
    failed_delivery(env, sam)
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    held = hand_off_a_new_participant(env, "+14165550188")
    asked = ask_for_a_person(env, "+14165550189")
    transport = HttpTransport(server.url)
    console = ConsoleServer(CoordinatorClient(transport), port=0).start()
    yield console, {"sam": sam, "held": held, "asked": asked}
    console.stop()
    transport.close()
    server.stop()
    env.close()


PAGES = {
    "participants": "/",
    "participants-sorted": "/?sort=adherence&adherence=mid&day_from=1&day_to=30&zone=America%2FToronto&status=active",
    "queue": "/queue",
    "participant-deliveries": "/participants/{sam}",
    "participant-held": "/participants/{held}",
    "participant-asked": "/participants/{asked}",
    "study": "/study",
    "export": "/export",
    "not-found": "/no-such-page",
    # the participants' management (docs/console.md, "Managing participants")
    "enrol": "/enrol",
    "import": "/import",
    "edit": "/participants/{sam}/edit",
    "withdraw": "/participants/{sam}/withdraw",
    "delete": "/participants/{sam}/delete",
    "erase": "/participants/{sam}/erase",
}


def test_every_console_page_passes_axe(browser: Any, pages: tuple[ConsoleServer, dict[str, str]], axe: str) -> None:  # noqa: F811
    console, ids = pages
    browser.get(console.login_url)
    found: dict[str, list[str]] = {}
    for name, path in PAGES.items():
        browser.get(console.url + path.format(**ids))
        assert browser.find_elements(By.TAG_NAME, "main"), name
        for violation in violations(browser, axe):
            found.setdefault(name, []).extend(
                f"{violation['id']} ({violation['impact']}): {violation['help']} at {node}"
                for node in violation["nodes"]
            )
    assert found == {}, "\n".join(f"{page}: {line}" for page, lines in found.items() for line in lines)


def test_the_import_preview_passes_axe(
    browser: Any,  # noqa: F811
    pages: tuple[ConsoleServer, dict[str, str]],
    axe: str,
    tmp_path: Path,
) -> None:
    """The cohort's preview (a POST's answer, so not in PAGES): its table of rows and problems."""
    console, _ids = pages
    cohort = tmp_path / "cohort.csv"
    cohort.write_text("phone_number,name,timezone\n+1 416 555 0150,Jo,America/Toronto\n12,Max,Mars/Olympus\n")
    browser.get(console.login_url)
    browser.get(console.url + "/import")
    browser.find_element(By.ID, "csv").send_keys(str(cohort))
    _submit(browser, "form.manage")  # waits for the preview page (a bare click raced it under load)
    assert "2 rows read" in browser.find_element(By.ID, "import-summary").text
    assert [f"{v['id']}: {v['nodes']}" for v in violations(browser, axe)] == []


def test_the_harness_fails_on_a_violation(browser: Any, pages: tuple[ConsoleServer, dict[str, str]], axe: str) -> None:  # noqa: F811
    # A page broken on purpose: an unlabelled field, an image without a text, grey on grey
    console, _ids = pages
    browser.get(console.login_url)
    browser.get(console.url + "/export")
    browser.execute_script(
        "const m = document.querySelector('main');"
        "m.insertAdjacentHTML('beforeend', '<input type=text><img src=/static/style.css>"
        "<p id=faint>faint words</p>');"
        "const f = document.getElementById('faint'); f.style.color = '#bbb'; f.style.background = '#ccc';"
    )
    ids = {v["id"] for v in violations(browser, axe)}
    assert {"label", "image-alt", "color-contrast"} <= ids


def test_the_list_is_used_with_the_keyboard_alone(browser: Any, pages: tuple[ConsoleServer, dict[str, str]]) -> None:  # noqa: F811
    console, _ids = pages
    browser.get(console.login_url)
    browser.get(console.url + "/")
    reached = []
    for _ in range(40):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        active = browser.switch_to.active_element
        if active.tag_name == "body":  # past the last control: the page's end
            break
        reached.append((active.tag_name, active.get_attribute("id") or active.get_attribute("href") or active.text))
        outline = browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", reached[-1]  # the focus shows
    tags = {tag for tag, _ in reached}
    names = [name for _, name in reached]
    # The skip link first, then the navigation (the queue first), then every filter, then the rows
    assert reached[0][0] == "a" and names[0].endswith("#main")
    assert names[1].endswith("/") and names[2].endswith("/queue")
    for control in ("q", "status", "zone", "day_from", "day_to", "adherence", "sort"):
        assert control in names, (control, names)
    assert names.index("q") < names.index("sort") and {"a", "input", "select", "button"} <= tags
    # Enter on a participant's link opens their page
    browser.get(console.url + "/")
    link = browser.find_element(By.LINK_TEXT, "Sam")
    link.send_keys(Keys.ENTER)
    assert browser.title.startswith("Sam")
