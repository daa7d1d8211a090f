"""``python -m memory``: see ``memory.cli``."""

import sys

from memory.cli import main

sys.exit(main())
