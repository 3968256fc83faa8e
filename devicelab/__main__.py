"""`python -m devicelab COMMAND`: the same as the `devicelab` command (devicelab/cli.py)."""

import sys

from devicelab.cli import main

sys.exit(main())
