"""python -m devicelab.grading: grade submitted notebooks."""

import sys

from . import main

sys.exit(main())
