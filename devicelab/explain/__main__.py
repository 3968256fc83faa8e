"""`python -m devicelab.explain [FILE] [--lang zh|en]`."""

import sys

from . import main

sys.exit(main())
