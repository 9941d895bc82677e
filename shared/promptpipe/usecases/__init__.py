"""The application layer: every use case, a function of the application context (``context.AppContext``,
the ports and config wired once by ``promptpipe.wiring``) and its typed input. Handlers, the local
stack and the CLI import the use case they run.

- ``participants``: the enrollment API (enroll, read, find by phone, update, delete, history, state,
  override);
- ``receive_inbound``: what the webhooks do with every inbound message and delivery report; text goes
  to ``receive_text`` (opt-out/in, auto-enroll, the turn queue; no model call);
- ``events``: one event per unit of work (a turn, a daily prompt, a timer firing);
- ``write_once``: the runner every state-changing event goes through (open, replay or work, commit
  once, one failure handling);
- ``sending``: the effects after the commit (``apply_effects``: messages, then schedules);
  ``schedules``: schedule changes, the pending-effects marker and its repair, reconcile;
  ``carrier_opt_out``: a refusal that says the number opted out at the carrier;
- ``import_participants``, ``import_history``: ``promptpipe import`` from the original;
- ``outcomes``: the typed results the handlers log and count (``outcome_metrics``: their metrics).

Each function imports only what it runs: the webhook never loads the conversation engine (the
``events`` module imports it at the first turn).
"""
