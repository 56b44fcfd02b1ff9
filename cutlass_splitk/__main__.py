"""``python -m cutlass_splitk``: the ``cutlass-splitk`` command line."""

import sys

from .cli import main

sys.exit(main())
