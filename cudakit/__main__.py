"""``python -m cudakit grade ...``: the same as the ``cudakit`` console script."""

import sys

from .cli import main

sys.exit(main())
