"""The built site served on localhost under a sub-path, as a project page is hosted.

Used by the browser tests, the build tests and the benchmarks that load pages.

``https://<owner>.github.io/attention-math/`` serves the site below ``/attention-math/``;
``SiteServer`` does the same on ``127.0.0.1``: a missing path gets the site's ``404.html``
with status 404, and nothing is served outside the sub-path. The server binds its port
when created, so the site can be built for its address (``SITE_URL``) before it serves.
``SiteServer(compress=True)`` sends text files gzip-compressed to a client that accepts it,
as the host (GitHub Pages) does: what Lighthouse's throttled network should see.
"""

from __future__ import annotations

import gzip
import http.server
import io
import threading
from pathlib import Path
from typing import Any

__all__ = ["SUBPATH", "SiteServer"]

SUBPATH = "/attention-math/"
# what the host compresses (GitHub Pages: text types); images such as PNG are left alone
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files of ``server.site`` below ``SUBPATH``; anything else: its 404 page."""

    server: SiteServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(self.server_site(args[2])), **kwargs)

    @staticmethod
    def server_site(server: SiteServer) -> Path:
        if server.site is None:
            raise RuntimeError("SiteServer.start(site) was not called")
        return server.site

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests report what matters

    def translate_path(self, path: str) -> str:
        if not path.startswith(SUBPATH):
            return str(Path(self.directory) / "outside-the-sub-path")  # no such file: 404
        return super().translate_path("/" + path.removeprefix(SUBPATH))

    def send_head(self) -> Any:
        """As the base class, but a text file gzip-compressed when the server compresses."""
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # redirected to the address with a slash
            path = path / "index.html"
        wants = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.server.compress and wants and path.suffix in COMPRESSED and path.is_file()):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
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


class SiteServer(http.server.ThreadingHTTPServer):
    """A static server bound to ``127.0.0.1:port`` (0: any free port) for a built site;
    ``compress``: text files gzip-compressed, as the host sends them.

    ``url`` (``http://127.0.0.1:PORT/attention-math/``) is known at once, to build for;
    ``start(site)`` serves ``site`` from a daemon thread; ``close()`` stops it.

    Examples:
        >>> import tempfile, urllib.error, urllib.request
        >>> with tempfile.TemporaryDirectory() as tmp, SiteServer() as server:
        ...     _ = (Path(tmp) / "index.html").write_text("home")
        ...     _ = (Path(tmp) / "404.html").write_text("not here")
        ...     url = server.start(Path(tmp))
        ...     home = urllib.request.urlopen(url).read()
        ...     try:
        ...         urllib.request.urlopen(url.removesuffix("attention-math/") + "index.html")
        ...     except urllib.error.HTTPError as e:
        ...         outside = (e.code, e.read())
        >>> url.endswith(SUBPATH), home, outside
        (True, b'home', (404, b'not here'))
    """

    daemon_threads = True

    def __init__(self, port: int = 0, *, compress: bool = False) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.compress = compress
        self.site: Path | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{SUBPATH}"

    def start(self, site: Path) -> str:
        """Serve ``site`` (idempotent); returns ``url``."""
        self.site = site
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve_forever, daemon=True)
            self._thread.start()
        return self.url

    def close(self) -> None:
        if self._thread is not None:
            self.shutdown()
        self.server_close()

    def __enter__(self) -> SiteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
