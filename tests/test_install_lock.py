"""requirements-lock.txt (tools/lock.sh, `make lock`) is what `make install` installs when it fits: it must be the
resolution of today's requirement files, pin every requirement they pin at that version, satisfy every range they
give, and name no package twice. A requirement file changed without `make lock` fails here, not silently at install
time (tools/install.sh would resolve instead, about twenty seconds slower)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
FILES = ("requirements.txt", "requirements-site.txt", "requirements-test.txt")  # as tools/install.sh hashes them
LOCK = ROOT / "requirements-lock.txt"


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, version = line.split("==")
        assert canonicalize_name(name) not in pins, f"{name} is pinned twice"
        pins[canonicalize_name(name)] = version
    return pins


def requirements() -> list[Requirement]:
    found = []
    for name in FILES:
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-"):
                found.append(Requirement(line))
    return found


def test_the_lock_was_written_from_todays_requirement_files():
    digest = hashlib.sha256(b"".join((ROOT / name).read_bytes() for name in FILES)).hexdigest()[:16]
    header = re.search(r"^# requirements: (\w+)$", LOCK.read_text(encoding="utf-8"), re.M)
    assert header and header[1] == digest, "a requirements file changed since requirements-lock.txt: run `make lock`"
    assert re.search(r"^# platform: cp\d+-\S+$", LOCK.read_text(encoding="utf-8"), re.M)


def test_every_requirement_is_locked_at_a_version_it_accepts():
    pins = locked()
    for requirement in requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in the lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), f"{requirement}: locked {pins[name]}"
    assert "pip" not in pins and "rfc3987-syntax" not in pins  # install.sh pins pip itself and removes the other
