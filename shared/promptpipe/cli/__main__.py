"""``python -m promptpipe.cli``: the same as the ``promptpipe`` console script."""

from promptpipe.cli.commands import main

raise SystemExit(main())
