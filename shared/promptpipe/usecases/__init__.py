"""The application's use cases, one module per group, behind the ``promptpipe.services.PromptPipe`` facade.

- ``participants``: the enrollment API (enroll, read, update, delete, history, state, override);
- ``inbound``: the webhook's side of a message (opt-out/in, auto-enroll, enqueue; no model call);
- ``events``: one event per unit of work (a turn, a daily prompt, a timer firing), committed once;
- ``sending``: the effects after the commit (messages, then schedules), resume and reconcile;
- ``outcomes``: the typed results the handlers log and count.

Each module is imported by the facade on first use, so a function imports only the use cases it runs
(the webhook never loads the conversation engine).
"""
