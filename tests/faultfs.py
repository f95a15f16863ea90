#!/usr/bin/python3
"""A FUSE filesystem for iogauge's fault tests: one file, `disk`, held in memory, that fails
or stops answering where told.

    faultfs.py MOUNTPOINT SIZE_MIB [--eio START-END]... [--hang START-END]...
               [--flip START-END]... [--lose START-END]...
               [--delay MS [--delay-after S | --delay-until S | --delay-from-handle N]
               [--delay-factor F]]

Offsets are in bytes. An I/O touching an --eio range fails with EIO; one touching a --hang
range never answers (until the filesystem is unmounted or killed). Silent data faults, for
verification: a read touching a --flip range returns its data with one byte inverted (100
bytes into the range, or into the read if it starts later); a write touching a --lose range
succeeds but is stored only every second time (lost writes). --delay makes every read and
write take MS milliseconds more, as a device that sleeps (requests are served in parallel);
with --delay-after, only from S seconds after its first read or write (a device that slows
down, at a time known from the run's start however late the run starts); with --delay-until,
only until S seconds after it (a device slow while a run ramps up, fast once it records);
with --delay-from-handle, only through the N-th open file handle to read or write and later ones
(one handle per worker and run: a device that slows down between one run and the next,
whatever the time each takes). --delay-factor multiplies the delay by F for each handle after
that (a device slower run after run, each run F times slower than the one before).
Every I/O goes to the filesystem (direct_io), none is served from the page cache. Runs in the foreground; prints
"ready" on stdout once mounted.
"""

import errno
import os
import stat
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations


def ranges(args, flag):
    out = []
    for i, a in enumerate(args):
        if a == flag:
            lo, hi = args[i + 1].split("-")
            out.append((int(lo), int(hi)))
    return out


class FaultFS(Operations):
    def __init__(self, size, eio, hang, flip, lose, delay, after, until, from_handle, factor):
        self.delay = delay
        self.after = after
        self.until = until
        self.delay_from = None  # set at the first I/O, as delay_until
        self.from_handle = from_handle
        self.factor = factor
        self.opens = 0
        self.handles = {}  # open number -> its number among the handles that did I/O
        self.data = bytearray(size)
        self.eio = eio
        self.hang = hang
        self.flip = flip
        self.lose = lose
        self.lost = 0
        self.mutex = threading.Lock()
        self.now = time.time()

    def hit(self, zones, offset, length):
        return any(offset < hi and offset + length > lo for lo, hi in zones)

    def check(self, offset, length, fh):
        # fh numbers the opens; probes that open the file without I/O do not count as handles.
        with self.mutex:
            handle = self.handles.setdefault(fh, len(self.handles) + 1)
            if self.delay_from is None:
                self.delay_from = time.monotonic() + self.after
                self.delay_until = time.monotonic() + self.until
        now = time.monotonic()
        if self.delay and self.delay_from <= now < self.delay_until and handle >= self.from_handle:
            time.sleep(self.delay * self.factor ** (handle - self.from_handle))
        if self.hit(self.hang, offset, length):
            threading.Event().wait()  # never answers
        if self.hit(self.eio, offset, length):
            raise FuseOSError(errno.EIO)

    def getattr(self, path, fh=None):
        base = {"st_atime": self.now, "st_mtime": self.now, "st_ctime": self.now, "st_uid": 0, "st_gid": 0}
        if path == "/":
            return dict(base, st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == "/disk":
            return dict(base, st_mode=stat.S_IFREG | 0o644, st_nlink=1, st_size=len(self.data))
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", "disk"]

    def open(self, path, flags):
        if path != "/disk":
            raise FuseOSError(errno.ENOENT)
        with self.mutex:
            self.opens += 1
            return self.opens

    def read(self, path, size, offset, fh):
        self.check(offset, size, fh)
        with self.mutex:
            out = bytearray(self.data[offset : offset + size])
        for lo, hi in self.flip:
            at = max(lo, offset) + 100
            if at < min(hi, offset + size):
                out[at - offset] ^= 0xFF
        return bytes(out)

    def write(self, path, buf, offset, fh):
        self.check(offset, len(buf), fh)
        if offset + len(buf) > len(self.data):
            raise FuseOSError(errno.ENOSPC)
        with self.mutex:
            if self.hit(self.lose, offset, len(buf)):
                self.lost += 1
                if self.lost % 2 == 1:
                    return len(buf)  # acknowledged, never stored
            self.data[offset : offset + len(buf)] = buf
        return len(buf)

    def truncate(self, path, length, fh=None):
        raise FuseOSError(errno.EPERM)

    def lock(self, path, fh, cmd, lock):
        return 0  # no other user to exclude

    def getxattr(self, path, name, position=0):
        raise FuseOSError(errno.ENODATA)

    def listxattr(self, path):
        return []


def main():
    mount, size = sys.argv[1], int(sys.argv[2]) << 20
    arg = lambda flag: ranges(sys.argv, flag)
    option = lambda flag, default: float(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default
    delay = option("--delay", 0) / 1000
    after = option("--delay-after", 0)
    until = option("--delay-until", float("inf"))
    from_handle = int(option("--delay-from-handle", 1))
    factor = option("--delay-factor", 1)
    fs = FaultFS(size, arg("--eio"), arg("--hang"), arg("--flip"), arg("--lose"), delay, after, until, from_handle, factor)
    threading.Timer(0.3, lambda: print("ready", flush=True)).start()
    FUSE(fs, mount, foreground=True, nothreads=False, direct_io=True, allow_other=False)


if __name__ == "__main__":
    main()
