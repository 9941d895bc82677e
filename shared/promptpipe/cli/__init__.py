"""The ``promptpipe`` command (docs/cli.md); ``python -m promptpipe.cli`` runs it too.

- ``commands``: the parser, the local commands (demo, chat, serve, simulate, flows, prompts, import)
  and the dispatch (``main``, the console script's entry point);
- ``coordinator_commands``: the coordinator's commands over the participants API.

Its exit codes and one-line ``CliError`` are ``promptpipe.exit_codes``, below the local stack and the
console that raise them.
"""
