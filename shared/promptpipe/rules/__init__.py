"""Pure rules: functions of their arguments, no I/O, no clock but the one passed in.

- ``tone``: the participant's tone policy (tags, explicit wishes, decay);
- ``scheduling``: daily prompt times, cron and rate expressions, wall time in a zone;
- ``quiet_hours``: when a message may be sent in the participant's zone;
- ``timezones``: which IANA names are accepted;
- ``clock``: time as a port (``Clock``) and RFC 3339;
- ``phone``: phone numbers as typed, as providers send them, masked for the logs;
- ``sms``: SMS segments and the GSM-7 alphabet;
- ``text_clipping``: the length rule of an inbound text;
- ``http_body``: request bodies and outside JSON text (size cap, base64, UTF-8, depth, duplicate keys).

They import nothing of the package but ``promptpipe.errors`` and each other: the models, the flow and
the adapters build on them (pyproject.toml, the ``rules-and-flow-below-the-application`` contract).
"""
