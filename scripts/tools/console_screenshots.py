"""The screenshots of docs/console.md, taken in headless Chromium against the local stack: the demo
week (one message refused by the provider, one skipped outside WhatsApp's window), a participant the
flow controller handed off and one who asked for a person.

    .venv/bin/python -m scripts.tools.console_screenshots [--out docs/images]

Needs chromium and chromium-driver (Debian's packages) and selenium (the dev extra), as the browser
tests do. Writes console-queue.png, console-list.png, console-delivery.png and console-study.png.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "queue": "/queue",
    "list": "/?sort=adherence",
    "delivery": "/participants/{sam}",
    "study": "/study",
}


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
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    hand_off_a_new_participant(env, "+14165550188")
    ask_for_a_person(env, "+14165550189")
    transport = HttpTransport(server.url)
    console = ConsoleServer(CoordinatorClient(transport), port=0).start()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        browser.get(console.login_url)
        for name, path in PAGES.items():
            browser.get(console.url + path.format(sam=sam))
            if name == "delivery":  # the conversation's refused and skipped messages, with the costs
                browser.execute_script("arguments[0].scrollIntoView()", browser.find_element(By.ID, "chat-h"))
            target = args.out / f"console-{name}.png"
            browser.save_screenshot(str(target))
            print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    finally:
        browser.quit()
        console.stop()
        transport.close()
        server.stop()
        env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
