"""Write ``shared/promptpipe/adapters/aws_endpoints.json``: the installed botocore's endpoint data for
the services the application uses (``adapters.botocore_data.trim_endpoints``), with that botocore's version.

Run: ``python -m scripts.trim_aws_endpoints`` after upgrading botocore (``tests/unit/test_aws_clients.py``
fails until the file matches the installed botocore again).
"""

from __future__ import annotations

import json

import botocore
import botocore.loaders

from promptpipe.adapters.botocore_data import ENDPOINTS_FILE, trim_endpoints


def trimmed_endpoints_text() -> str:
    """The file's text for the installed botocore."""
    endpoints = botocore.loaders.Loader().load_data("endpoints")
    cut = {"botocore": botocore.__version__, "endpoints": trim_endpoints(endpoints)}
    return json.dumps(cut, indent=1, sort_keys=True) + "\n"


def main() -> int:
    ENDPOINTS_FILE.write_text(trimmed_endpoints_text(), encoding="utf-8")
    print(f"wrote {ENDPOINTS_FILE} ({ENDPOINTS_FILE.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
