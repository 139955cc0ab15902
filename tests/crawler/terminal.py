"""A pseudo-terminal of a given width for progress tests (a test helper).

``with Terminal(columns=100) as term:`` gives ``term.stream``, a text stream on the
terminal's slave side (``isatty()`` is true and ``os.get_terminal_size`` says 100
columns); a thread reads the master side until the slave closes; ``term.output`` is
everything written, with the line discipline's ``\\r\\n`` for ``\\n`` undone.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import termios
import threading
from types import TracebackType
from typing import TextIO

ERASE_LINE = "\x1b[K"


class Terminal:
    def __init__(self, columns: int = 100, rows: int = 30) -> None:
        self.columns = columns
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self._master = master
        self.stream: TextIO = os.fdopen(slave, "w", encoding="utf-8")
        self._chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self.output = ""

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO: the slave side is closed
                return
            if not chunk:
                return
            self._chunks.append(chunk)

    def __enter__(self) -> Terminal:
        self._reader.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stream.close()
        self._reader.join(timeout=10)
        os.close(self._master)
        self.output = b"".join(self._chunks).decode("utf-8").replace("\r\n", "\n")


def redraws(output: str) -> list[str]:
    """The status lines drawn in place: the text after each carriage return up to the
    next one, with the erase-to-end-of-line removed (the text that a line end follows
    stays on screen: it is a line of its own, not a redraw)."""
    drawn = []
    rows = output.split("\n")
    for i, row in enumerate(rows):
        pieces = row.split("\r")[1:]
        if i < len(rows) - 1:
            pieces = pieces[:-1]
        drawn += [text for piece in pieces if (text := piece.replace(ERASE_LINE, ""))]
    return drawn


def visible(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
