"""Who may use the console, and what it may say (docs/console.md, "The token").

The console's token is its credential, as Jupyter's is: a request holds it as the ``?token=`` of the
address printed at start, the cookie that address sets, or an ``Authorization: token …`` header.
Every answer is ``Cache-Control: no-store``. After an action, the console names a notice by its code;
a page shows only the sentence of a code in ``NOTICES`` (``resolved:<sub-state>`` with one of the
sub-states), so a link's own ``?notice=`` text is never the console's banner.
"""

from __future__ import annotations

import secrets
from http.cookies import CookieError, SimpleCookie

from promptpipe.models.state import SubState

SUB_STATES = tuple(s.value for s in SubState)
NO_STORE = "no-store"
# What the console says after an action, by code: the only notices it shows (a link's ``?notice=``
# names one of these, never the text).
NOTICES = {
    "paused": "Paused: no prompts or reminders until resumed.",
    "resumed": "Resumed: daily prompts are scheduled again.",
    "resolved": "Hand-off resolved; the conversation continues in {sub_state}; the note is in the transcript.",
    # The console's management actions (console/manage.py)
    "enrolled": "Enrolled: the greeting is on its way.",
    "edited": "Saved; a new zone moves the daily prompt to the same local time there.",
    "withdrawn": "Withdrawn: no more messages; the record is kept under the retention rules.",
    "staff-sent": "Your message went to the participant; the coach is held until you release it.",
    "released": "Released: the coach continues the conversation.",
    "deleted": "Deleted; the transcript is kept for the study.",
    "erased": "Erased: the participant's data is gone; the audit keeps the record of the erasure.",
}
TOKEN_NEEDED = (
    "This console needs its token: open the address it printed when it started (…/?token=…), "
    "or start it with --no-token."
)


def notice_text(code: str | None) -> str | None:
    """The console's notice of ``code`` (``resolved:<sub-state>`` names the sub-state); None for
    anything not in ``NOTICES``."""
    name, _, sub_state = (code or "").partition(":")
    if name == "resolved":
        return NOTICES[name].format(sub_state=sub_state) if sub_state in SUB_STATES else None
    return NOTICES.get(name) if not sub_state else None


def same_token(given: str, token: str) -> bool:
    return secrets.compare_digest(given.encode(), token.encode())


def cookie_value(cookie_header: str, cookie_name: str) -> str | None:
    """The value of the request's cookie ``cookie_name``, if it has one."""
    try:
        morsel = SimpleCookie(cookie_header).get(cookie_name)
    except CookieError:
        return None
    return morsel.value if morsel is not None else None
