"""The screenshots of docs/console.md, taken in headless Chromium against the local stack: the demo
week (one message refused by the provider, one skipped outside WhatsApp's window), a participant the
flow controller handed off and one who asked for a person, and a coordinator's actions on the demo's
participant (a pause with its reason, a zone edit, a staff message and its release) for the audit.

    .venv/bin/python -m scripts.tools.console_screenshots [--out docs/images]

Needs chromium and chromium-driver (Debian's packages) and selenium (the dev extra), as the browser
tests do. The window is 1100 px wide; each PNG is the viewport (no full-page capture), and the run
fails when one is over 150 KB. Writes console-list.png (the front page), console-queue.png,
console-delivery.png (a participant's transcript with each delivery), console-import.png (a cohort's
preview), console-audit.png and console-study.png.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# name: the page, and the heading scrolled to the top of the window ("" for none)
PAGES = {
    "list": ("/?sort=adherence", ""),
    "queue": ("/queue", ""),
    "delivery": ("/participants/{sam}", "chat-h"),
    "audit": ("/participants/{sam}", "audit-h"),
    "study": ("/study", ""),
}
WIDTH, HEIGHT = 1100, 820
MAX_BYTES = 150 * 1024
COORDINATOR = "Ana Lopez"
# A cohort's file with two rows the preview refuses (a number that is none, a zone that is none).
COHORT = """phone_number,name,timezone
+1 416 555 0150,Jo,America/Toronto
+1 416 555 0151,Lee,America/Chicago
12,Max,America/Toronto
+1 416 555 0153,Noor,Mars/Olympus
+1 416 555 0154,Ola,Europe/Madrid
"""


def coordinator_actions(env: Any, pid: str) -> None:
    """What a coordinator does to the demo's participant, for the audit: as the console calls the API."""
    base = f"/conversation/participants/{pid}"
    by = {"by": COORDINATOR}
    env.api("PUT", base, json_body={"status": "paused", "reason": "on holiday this week", **by})
    env.api("PUT", base, json_body={"status": "active", **by})
    env.api("PUT", base, json_body={"timezone": "America/Chicago", "reason": "moved to Chicago", **by})
    env.api("POST", f"{base}/staff-messages", json_body={"body": "Hi Sam, Ana from the study team here.", **by})
    env.api("POST", f"{base}/state", json_body={"release_hold": True, "reason": "talked it through", **by})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    chromium, driver_path = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if not chromium or not driver_path:
        print("needs chromium and chromium-driver (apt-get install chromium chromium-driver)", file=sys.stderr)
        return 2
    for name in ("POWERTOOLS_METRICS_DISABLED", "POWERTOOLS_TRACE_DISABLED"):
        os.environ.setdefault(name, "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    from promptpipe.adapters.api_http import HttpTransport
    from promptpipe.console.app import ConsoleServer
    from promptpipe.coordinator.client import CoordinatorClient
    from promptpipe.local.demo import DEMO_START, run_demo
    from promptpipe.local.environment import LocalEnvironment, local_settings
    from promptpipe.local.server import LocalServer
    from tests.browser.test_console_a11y import ask_for_a_person, failed_delivery
    from tests.support import hand_off_a_new_participant

    env = LocalEnvironment(start=DEMO_START, settings=local_settings(offline_coach=True, openai_api_key=None))
    sam = run_demo(env).participant_id
    failed_delivery(env, sam)
    coordinator_actions(env, sam)
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    hand_off_a_new_participant(env, "+14165550188")
    ask_for_a_person(env, "+14165550189")
    transport = HttpTransport(server.url)
    console = ConsoleServer(CoordinatorClient(transport), port=0, operator=COORDINATOR).start()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    args.out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    try:
        browser.get(console.login_url)
        for name, (path, heading) in PAGES.items():
            browser.get(console.url + path.format(sam=sam))
            if heading:
                browser.execute_script("arguments[0].scrollIntoView()", browser.find_element(By.ID, heading))
            written.append(args.out / f"console-{name}.png")
            browser.save_screenshot(str(written[-1]))
        with tempfile.TemporaryDirectory() as folder:  # the import's preview: nothing is enrolled
            cohort = Path(folder) / "cohort.csv"
            cohort.write_text(COHORT, encoding="utf-8")
            browser.get(console.url + "/import")
            browser.find_element(By.ID, "csv").send_keys(str(cohort))
            browser.find_element(By.CSS_SELECTOR, "form.manage button[type=submit]").click()
            browser.find_element(By.ID, "import-summary")
            written.append(args.out / "console-import.png")
            browser.save_screenshot(str(written[-1]))
    finally:
        browser.quit()
        console.stop()
        transport.close()
        server.stop()
        env.close()
    too_big = False
    for target in written:
        size = target.stat().st_size
        too_big |= size > MAX_BYTES
        shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
        print(f"wrote {shown} ({size // 1024} KB){' over 150 KB' if size > MAX_BYTES else ''}")
    return 1 if too_big else 0


if __name__ == "__main__":
    raise SystemExit(main())
