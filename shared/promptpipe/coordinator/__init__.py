"""The study coordinator's side: an API client (port + transports), transcripts in local time,
per-participant summaries and the research export. Used by the CLI and the console; the core never
imports it."""
