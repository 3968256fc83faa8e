"""Build the whole bilingual site once per test session; serve it and drive it in headless Chromium."""

import fcntl
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def site(tmp_path_factory, worker_id) -> Path:
    """The site built once per test run: under pytest-xdist the first worker builds it, the others wait and reuse it."""
    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    out, lock_path = shared / "site", shared / "site.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (out / "index.html").exists():
            # A stale stored run fails the build instead of being executed into the checkout: the test that says
            # so (test_solution_outputs.py) then fails whichever test runs first, and no test writes to the
            # repository's solutions/executed/ (a build that executed them cost about 150 CPU-s).
            env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DEVICELAB_OUTPUTS": "require"}
            partial = shared / "site.partial"
            shutil.rmtree(partial, ignore_errors=True)
            done = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(partial)],
                cwd=ROOT, capture_output=True, text=True, env=env,
            )
            assert done.returncode == 0, done.stderr[-4000:]
            partial.rename(out)
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site as GitHub Pages does: a missing address gets the root 404.html, with status 404."""

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass

    def send_error(self, code, message=None, explain=None):  # noqa: ANN001 - the base class's signature
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _QuietServer(http.server.ThreadingHTTPServer):
    """A browser that leaves a page while a file is on its way (a picture the paste page was fetching) closes
    the connection: that is no error of the site's, and no traceback in the test log."""

    def handle_error(self, request, client_address):  # noqa: ANN001 - the base class's signature
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@pytest.fixture(scope="session")
def base_url(site: Path):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield browser
        browser.close()
