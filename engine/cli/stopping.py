"""How a command learns it was asked to stop. SIGTERM and SIGHUP end a command as Ctrl-C does:
stores close (the embedded server stops when it was the last user), then the process exits with
128 + the signal's number (130 for Ctrl-C).

The handler's exception alone can be lost. Raised while a finalizer runs (a ``__del__`` or a
weak reference's callback the garbage collector called), Python hands it to
``sys.unraisablehook`` and goes on: the hook installed here drops it without a traceback and
has the signal's handler run again a moment later. Raised in watchfiles' wait, it ends the
watch as ``KeyboardInterrupt`` whatever the signal was. So the handler also records the signal:
a watch is given :data:`REQUEST` as its stop event, and a command that stops after a signal exits
with that signal's status (:meth:`StopRequest.exit_if_requested`)."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

__all__ = ["REQUEST", "StopRequest", "install"]

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequest(threading.Event):
    """Set by the first stopping signal; remembers which one it was, and whether its exception
    was lost before the command began to stop."""

    def __init__(self) -> None:
        super().__init__()
        self.number: signal.Signals | None = None
        self._lock = threading.Lock()
        self._pending = False  # the exception was lost and the command has not stopped yet
        self._again = False  # the next call of the handler is the signal sent again

    def handle(self, signum: int, frame: FrameType | None) -> None:
        with self._lock:
            again, self._again = self._again, False
            if again and not self._pending:
                return  # the command is already stopping; only a signal from outside stops that
            self._pending = False
        if self.number is None:
            self.number = signal.Signals(signum)
        self.set()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def lost(self, unraisable: UnraisableHookArgs) -> bool:
        """Whether ``unraisable`` is the handler's exception, dropped in a finalizer; if so the
        signal is sent again shortly (after the finalizer returned), unless by then the command
        is stopping (:meth:`exit_if_requested`)."""
        if self.number is None or not isinstance(
            unraisable.exc_value, (SystemExit, KeyboardInterrupt)
        ):
            return False
        with self._lock:
            self._pending = True
        timer = threading.Timer(0.05, self._send_again)
        timer.daemon = True
        timer.start()
        return True

    def _send_again(self) -> None:
        with self._lock:
            if not self._pending or self.number is None:
                return
            self._again = True
        signal.pthread_kill(threading.main_thread().ident or 0, self.number)

    def exit_if_requested(self) -> None:
        """Exit with the signal's status if one arrived (its exception may have been lost)."""
        with self._lock:
            self._pending = False
        if self.number is not None:
            raise typer.Exit(128 + self.number)


REQUEST = StopRequest()  # signals are the process's, so is the record of one


def install() -> None:
    """Route the stopping signals to :data:`REQUEST`; a signal a parent left ignored (a runner
    started in the background of a shell without job control ignores SIGINT) stays ignored."""
    for number in STOPPING:
        if signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, REQUEST.handle)
    before = sys.unraisablehook

    def unraisable(args: UnraisableHookArgs) -> None:
        if not REQUEST.lost(args):
            before(args)

    sys.unraisablehook = unraisable
