"""The real projects' files kept for measuring the linter are data, never tests (nor notebooks for nbval to run)."""

collect_ignore_glob = ["realworld/*"]
