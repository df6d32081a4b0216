"""``python -m dpbandits``: the same as the ``dpbandits`` command."""

from dpbandits.cli import main

raise SystemExit(main())
