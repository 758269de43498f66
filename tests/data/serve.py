"""A folder served over HTTP on 127.0.0.1, for the download tests (this machine has no internet)."""

import contextlib
import functools
import http.server
import threading
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:      # keep the test output clean
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """Serve ``folder`` at ``http://127.0.0.1:<free port>/`` while the block runs; yields the
    base URL (ending in a slash)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
