"""`python -m devicelab.lint PATH...`."""

import sys

from . import main

sys.exit(main())
