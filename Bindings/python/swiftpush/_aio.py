"""asyncio for Client: asend()/asend_many() (await each notification's Result) and apoll()'s
wait, all on one reader of the client's result descriptor (push_client_result_fd) per client.

Why one reader: asyncio keeps one callback per descriptor and loop (a second add_reader
replaces the first), so an apoll() and an asend() each adding their own would steal each
other's wake-ups. The _Dispatcher reads for all of them: it polls every result that arrives,
hands those an asend awaits to it (by tag) and keeps the others for poll()/apoll().

Why waiting for room needs no thread: the queue's capacity counts results not yet polled, so
room appears only when results leave the library, and they leave only through a poll (this
reader's, or poll() on any thread). Every such poll bumps `freed` and wakes the coroutines
waiting for room, which then try again; a send that finds the queue full never waits inside
the library (timeout 0), so the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections import deque
from typing import TYPE_CHECKING, Any, Deque, Dict, List, Optional, Tuple

from ._errors import Closed, InvalidArgument, QueueFull, SwiftPushError
from ._ffi import PushError, lib
from ._tables import Status

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client, Result, _Row

#: How many notifications one push_client_send_batch call of asend_many carries (as send_many).
CHUNK = 1024
#: Results taken per push_client_poll call by the reader.
_POLL_MAX = 1024


class _Waiting:
    """The Results one asend()/asend_many() call awaits, filled in by position as they arrive.

    When its future is cancelled (the caller went away) later results are dropped: they are
    still counted in stats() and metrics. When the call failed part-way (`released`), the
    results of what it had queued go to poll()/apoll() instead, as send_many's would."""

    __slots__ = ("future", "results", "left", "released")

    def __init__(self, future: "asyncio.Future[List[Result]]", count: int) -> None:
        self.future = future
        self.results: List[Optional[Result]] = [None] * count
        self.left = count
        self.released = False

    def deliver(self, index: int, result: "Result", dispatcher: "_Dispatcher") -> None:
        if self.released:
            dispatcher.keep([result])
            return
        if self.future.done():
            return
        self.results[index] = result
        self.left -= 1
        if self.left == 0:
            self.future.set_result(self.results)  # type: ignore[arg-type]


class _Dispatcher:
    """The asyncio side of one Client (see the module's doc). Bound to one event loop at a time;
    everything but route() and take_unclaimed() runs on that loop's thread."""

    def __init__(self, client: "Client") -> None:
        # A strong reference: while the reader is registered the loop holds this object, and the
        # Client (whose descriptor it reads) must outlive the registration.
        self.client = client
        self.lock = threading.Lock()  # awaited, unclaimed, freed: also used by poll() on other threads
        self.awaited: Dict[int, Tuple[_Waiting, int]] = {}
        self.unclaimed: Deque["Result"] = deque()
        self.freed = 0  # bumped each time results left the library: room may have appeared
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.fd = -1
        self.reading = False
        self.room: List["asyncio.Future[None]"] = []
        self.pollers: List["asyncio.Future[None]"] = []
        self.finished = False  # the library said PUSH_E_CLOSED: no result will ever come again

    # -- binding -----------------------------------------------------------------------------------

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Makes `loop` the one this dispatcher reads on. A client may move to another loop
        (asyncio.run() twice) when nothing waits on the old one, or when the old one is closed
        (what waited there can never be resumed)."""
        if self.loop is loop:
            return
        old = self.loop
        if old is not None and not old.is_closed():
            if self.awaited or self.room or self.pollers:
                raise InvalidArgument(Status.INVALID_ARGUMENT,
                                      "this client's asend()/apoll() are waiting on another event loop")
            if self.reading:
                old.remove_reader(self.fd)
        self.reading = False
        self.room.clear()
        self.pollers.clear()
        with self.lock:
            self.awaited.clear()  # only futures of a closed loop can be left here
        self.fd = self.client.fileno()
        self.loop = loop

    def _update_interest(self) -> None:
        """Reads the descriptor exactly while someone waits for what a poll brings."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        want = not self.finished and bool(self.awaited or self.room or self.pollers)
        if want and not self.reading:
            loop.add_reader(self.fd, self._readable)
            self.reading = True
        elif not want and self.reading:
            loop.remove_reader(self.fd)
            self.reading = False

    # -- results leaving the library ---------------------------------------------------------------

    def route(self, results: List["Result"], done: bool, on_loop: bool) -> List["Result"]:
        """Called with what a poll took (on any thread): hands the results an asend awaits to
        it, wakes the senders waiting for room, and returns the others to the caller."""
        claimed: List[Tuple[_Waiting, int, Result]] = []
        rest = results
        with self.lock:
            if results:
                self.freed += 1
            if self.awaited and results:
                rest = []
                for r in results:
                    entry = self.awaited.pop(r.tag, None)
                    if entry is None:
                        rest.append(r)
                    else:
                        claimed.append((entry[0], entry[1], r))
        if on_loop:
            self._delivered(claimed, done)
        elif claimed or done or results:
            loop = self.loop
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(self._delivered, claimed, done)
                except RuntimeError:  # its loop is closed: no coroutine is left to resume
                    pass
        return rest

    def _delivered(self, claimed: List[Tuple[_Waiting, int, "Result"]], done: bool) -> None:
        for waiting, index, result in claimed:
            waiting.deliver(index, result, self)
        self._wake(self.room)
        if done:
            self.finished = True
            self._wake(self.pollers)
            with self.lock:
                left = list(self.awaited.values())
                self.awaited.clear()
            for waiting, _ in left:  # never expected: every notification gets its result first
                if not waiting.future.done():
                    waiting.future.set_exception(Closed(Status.CLOSED, "the client finished before this notification's result arrived"))
        self._update_interest()

    def _readable(self) -> None:
        """The reader: takes every waiting result, routes it, keeps the rest for apoll()."""
        try:
            while True:
                results, done = self.client._poll_c(_POLL_MAX, 0)
                rest = self.route(results, done, on_loop=True)
                if rest:
                    self.keep(rest)
                if done or len(results) < _POLL_MAX:
                    break
        except SwiftPushError as e:  # a status poll never returns for a valid client
            self._fail(e)

    def keep(self, results: List["Result"]) -> None:
        """Results nobody awaits: for poll()/apoll()/aresults()."""
        with self.lock:
            self.unclaimed.extend(results)
        self._wake(self.pollers)

    def take_unclaimed(self, max: int) -> List["Result"]:
        """Up to max kept results (any thread)."""
        if not self.unclaimed:
            return []
        with self.lock:
            n = min(max, len(self.unclaimed))
            return [self.unclaimed.popleft() for _ in range(n)]

    def _fail(self, error: BaseException) -> None:
        with self.lock:
            left = list(self.awaited.values())
            self.awaited.clear()
        for waiting, _ in left:
            if not waiting.future.done():
                waiting.future.set_exception(error)
        self._wake(self.room)
        self._wake(self.pollers)
        self._update_interest()

    @staticmethod
    def _wake(futures: List["asyncio.Future[None]"]) -> None:
        for f in futures:
            if not f.done():
                f.set_result(None)
        futures.clear()

    # -- waiting -----------------------------------------------------------------------------------

    async def _wait(self, queue: List["asyncio.Future[None]"], deadline: Optional[float]) -> bool:
        """Waits until woken through `queue` (True) or until `deadline` (loop time; False)."""
        loop = self.loop
        assert loop is not None
        future = loop.create_future()
        queue.append(future)
        self._update_interest()
        try:
            if deadline is None:
                await future
                return True
            left = deadline - loop.time()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(future, left)
                return True
            except asyncio.TimeoutError:
                return False
        finally:
            if future in queue:
                queue.remove(future)
            self._update_interest()

    async def results(self, max: int, timeout: Optional[float]) -> List["Result"]:
        """apoll()'s wait: up to max results, waiting up to timeout (None: no limit)."""
        loop = self.loop
        assert loop is not None
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            kept = self.take_unclaimed(max)
            if kept or self.finished:
                return kept
            if not await self._wait(self.pollers, deadline):
                return self.take_unclaimed(max)

    # -- sending -----------------------------------------------------------------------------------

    def _expect(self, rows: List["_Row"], waiting: _Waiting, first: int) -> None:
        """Registers the tags of rows (positions first.. in waiting) before they are sent: the
        result may be polled on another thread as soon as the send returns."""
        with self.lock:
            for i, row in enumerate(rows):
                tag = row[9]
                if tag in self.awaited:
                    for earlier in rows[:i]:
                        del self.awaited[earlier[9]]
                    raise InvalidArgument(Status.INVALID_ARGUMENT,
                                          f"tag {tag} is already awaited by another asend: asend needs tags "
                                          f"unique among the notifications it waits for (None picks one)")
                self.awaited[tag] = (waiting, first + i)

    def _forget(self, rows: List["_Row"]) -> None:
        """Unregisters rows that were never queued."""
        with self.lock:
            for row in rows:
                self.awaited.pop(row[9], None)

    def _release(self, rows: List["_Row"], waiting: _Waiting) -> None:
        """After a failed asend_many: the results of what it queued go to poll()/apoll()."""
        waiting.released = True
        got: List[Result] = []
        with self.lock:
            for i, row in enumerate(rows):
                if self.awaited.get(row[9], (None,))[0] is waiting:
                    del self.awaited[row[9]]  # arrives later: kept like any other result
                elif waiting.results[i] is not None:
                    got.append(waiting.results[i])  # type: ignore[arg-type]
        if got:
            self.keep(got)
        waiting.future.cancel()

    async def send(self, rows: List["_Row"], timeout: Optional[float], batch: bool) -> List["Result"]:
        """Queues rows in order without ever blocking the loop, then awaits their Results (in
        the same order). timeout: how long to wait for room in all (None: no limit, 0: raise
        QueueFull at once)."""
        loop = self.loop
        assert loop is not None
        client = self.client
        if not rows:
            return []
        waiting = _Waiting(loop.create_future(), len(rows))
        deadline = None if timeout is None else loop.time() + max(0.0, timeout)
        err = PushError()
        accepted = ctypes.c_ssize_t(0)
        queued = 0
        try:
            for first in range(0, len(rows), CHUNK):
                chunk = rows[first:first + CHUNK]
                packer = client._pack(chunk)
                self._expect(chunk, waiting, first)
                sent = 0
                try:
                    while sent < len(chunk):
                        freed = self.freed
                        try:
                            lib.push_client_send_batch(client._handle, packer.view(sent), len(chunk) - sent, 0,
                                                       ctypes.byref(accepted), err)
                            sent = len(chunk)
                        except QueueFull:
                            sent += accepted.value
                            # Room appeared between the try and now: try again at once.
                            if self.freed == freed and not await self._wait(self.room, deadline):
                                raise
                        except SwiftPushError:
                            sent += accepted.value
                            raise
                finally:
                    queued = first + sent
                    self._forget(chunk[sent:])
            self._update_interest()
            return await waiting.future
        except SwiftPushError as e:
            self._release(rows[:queued], waiting)
            if batch:
                from .client import _BATCH_PREFIX
                e.message = f"notification {queued}: {_BATCH_PREFIX.sub('', e.message)}"
                e.accepted = queued
                e.tags = [row[9] for row in rows[:queued]]
            raise
        except BaseException:
            # Cancelled (or interrupted): what was queued still gets its outcome, counted in
            # stats() and metrics, but nobody awaits it any more.
            waiting.future.cancel()
            raise
