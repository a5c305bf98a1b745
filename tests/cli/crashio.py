#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Writes that survive a crash, for t_crash.sh.

  crashio.py write FILE LOG --gen G [--mode rand|seq] [--blocks N] [--bs B]
             [--seconds S] [--seed X] [--ready FILE]
  crashio.py verify FILE LOG [--bs B] [--piece N]

write: records of B bytes (one block each) go to FILE with os.pwrite; every
few writes an os.fsync, and only once it has returned are the records it
covered appended to LOG ("block generation" lines, flushed and fsynced; LOG
is outside the volume).  Each record carries its block number and
generation, and its payload is a function of the two, so a block can be
checked on its own.  Generations start at G and grow by one per write call.
Before each write the records it carries are appended to LOG.try (the
writer is not the process that gets killed, so what it wrote there holds).
The writer stops at the first error (the daemon was killed: EIO, ENOTCONN)
or after S seconds (inf: until told) or a SIGTERM, and prints the next
generation it would have used.
FILE is created after the first write (the load is running).

verify: every block LOG names must hold an intact record of that block whose
generation is at least the last one LOG acknowledged for it (a later one is
a write that was under way when the daemon died: allowed, if intact).
With --piece N a block may also be torn: made of N-byte pieces (the last one
shorter), each the same piece of a record of that block that was written
(LOG.try) with a generation at least the acknowledged one.  That is what a
crash may leave of a write that was not yet acknowledged when one block of
the volume is stored in several provider sectors (integrity: the data of a
GELI sector lies in provider sectors of N data bytes each), and nothing
acknowledged is lost by it.  Prints what is wrong; status 1 then.
"""
import argparse
import hashlib
import os
import random
import signal
import struct
import sys
import time

MAGIC = b"GELICRSH"
HEAD = struct.Struct("<8sQQ")


def record(block, gen, bs):
    seed = hashlib.sha256(b"%d:%d" % (block, gen)).digest()
    body = bs - HEAD.size
    return HEAD.pack(MAGIC, block, gen) + (seed * (body // len(seed) + 1))[:body]


def check(buf, block, bs):
    """The generation of an intact record of block in buf, else None."""
    magic, b, g = HEAD.unpack_from(buf)
    if magic != MAGIC or b != block or buf != record(block, g, bs):
        return None
    return g


def write(a):
    rnd = random.Random(a.seed)
    fd = os.open(a.file, os.O_RDWR)
    log = open(a.log, "a")
    tries = open(a.log + ".try", "a")
    gen = a.gen
    pos = rnd.randrange(a.blocks)
    pending = []
    end = [time.monotonic() + a.seconds]

    def stop(*_):
        end[0] = 0     # SIGTERM: stop after the write under way
    signal.signal(signal.SIGTERM, stop)
    every = rnd.randint(1, 8)
    try:
        while time.monotonic() < end[0]:
            if a.mode == "rand":
                first, count = rnd.randrange(a.blocks), 1
            else:
                count = min(rnd.randint(1, 16), a.blocks - pos)
                first = pos
                pos = (pos + count) % a.blocks
            data = b"".join(record(first + i, gen, a.bs) for i in range(count))
            tries.write("".join("%d %d\n" % (first + i, gen) for i in range(count)))
            tries.flush()
            n = os.pwrite(fd, data, first * a.bs)
            if n != len(data):
                raise OSError(0, "short write")
            pending += [(first + i, gen) for i in range(count)]
            if a.ready and gen == a.gen:
                open(a.ready, "w").close()
            gen += 1
            every -= 1
            if every == 0:
                os.fsync(fd)
                # Acknowledged: only now does the log hear of them.
                log.write("".join("%d %d\n" % p for p in pending))
                log.flush()
                os.fsync(log.fileno())
                pending = []
                every = rnd.randint(1, 8)
    except OSError as e:
        print("stopped: %s" % e.strerror, file=sys.stderr)
    print(gen)
    return 0


def read_log(path):
    """block -> the generations a log names for it (none: no log yet)."""
    gens = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                b, g = map(int, line.split())
                gens.setdefault(b, set()).add(g)
    return gens


def torn(buf, block, bs, gens, piece):
    """buf is made of pieces of records of block of the generations gens."""
    recs = [record(block, g, bs) for g in gens]
    return all(any(buf[i:i + piece] == r[i:i + piece] for r in recs)
               for i in range(0, bs, piece))


def verify(a):
    # No log: nothing was acknowledged yet (killed before the first fsync).
    acked = {b: max(g) for b, g in read_log(a.log).items()}
    tried = read_log(a.log + ".try") if a.piece else {}
    bad = ntorn = 0
    with open(a.file, "rb", buffering=0) as f:
        for b in sorted(acked):
            f.seek(b * a.bs)
            buf = f.read(a.bs)
            g = check(buf, b, a.bs) if len(buf) == a.bs else None
            if g is None and len(buf) == a.bs and a.piece and torn(
                    buf, b, a.bs, [t for t in tried.get(b, ()) if t >= acked[b]],
                    a.piece):
                ntorn += 1
                continue
            if g is None or g < acked[b]:
                bad += 1
                if bad <= 10:
                    print("block %d: acknowledged generation %d, found %s" %
                          (b, acked[b], "garbage" if g is None else g))
    print("%d blocks checked, %d bad%s" % (len(acked), bad,
          ", %d torn by an unacknowledged write" % ntorn if a.piece else ""))
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("op", choices=["write", "verify"])
    p.add_argument("file")
    p.add_argument("log")
    p.add_argument("--gen", type=int, default=1)
    p.add_argument("--mode", choices=["rand", "seq"], default="rand")
    p.add_argument("--blocks", type=int, default=256)
    p.add_argument("--bs", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--ready", help="created after the first write")
    p.add_argument("--piece", type=int, default=0,
                   help="verify: a block may be torn into pieces of N bytes")
    a = p.parse_args()
    return write(a) if a.op == "write" else verify(a)


if __name__ == "__main__":
    sys.exit(main())
