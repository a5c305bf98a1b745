#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Power-loss states of several files from one strace, for t_reencrypt_crash.sh.

  powerloss.py TRACE OUTDIR NSTATES SEED NAME=BASE [NAME=BASE ...]

TRACE: strace -f -qq -xx -s N -e trace=openat,close,pwrite64,fsync,fdatasync,
unlink of a program that writes the files named NAME (their paths end with
/NAME).  BASE is each file's content before the program ran ("-": it did
not exist; it exists from the openat that creates it on).

A state is what a power loss at one moment could leave: a moment t among the
events; for each file, every write before its last fsync before t, and any
subset of its writes after that one (in order); a file unlinked before t is
gone.  OUTDIR/N/NAME holds state N's files (a file that does not exist is
not written); OUTDIR/N/at says which event t was, and OUTDIR/N/ended is
there when a file was unlinked before t (the program's end).  The moments are spread
over the whole trace, the first and the last among them.
"""
import os
import random
import re
import shutil
import sys

ARG = re.compile(r'^\d+ +(\w+)\((.*)\) += (-?\d+)')
HEX = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')


def unhex(s):
    return bytes.fromhex(s.replace('\\x', ''))


def events(trace, names):
    fds, ev = {}, []
    for line in open(trace):
        m = ARG.match(line)
        if not m or int(m.group(3)) < 0:
            continue
        call, args, ret = m.group(1), m.group(2), int(m.group(3))
        if call == 'openat':
            path = unhex(HEX.search(args).group(1)).decode()
            name = os.path.basename(path)
            if name in names:
                fds[ret] = name
                if 'O_CREAT' in args:
                    ev.append(('create', name))
        elif call == 'close':
            fds.pop(int(args), None)
        elif call == 'unlink':
            name = os.path.basename(unhex(HEX.search(args).group(1)).decode())
            if name in names:
                ev.append(('unlink', name))
        elif call == 'pwrite64':
            fd = int(args.split(',', 1)[0])
            if fd in fds:
                data = unhex(HEX.search(args).group(1))
                off = int(args.rsplit(',', 1)[1])
                ev.append(('write', fds[fd], off, data))
        elif call in ('fsync', 'fdatasync'):
            fd = int(args)
            if fd in fds:
                ev.append(('sync', fds[fd]))
    return ev


def state(ev, t, bases, rnd):
    files = {n: (bytearray(open(b, 'rb').read()) if b != '-' else None)
             for n, b in bases.items()}
    last_sync = {n: -1 for n in bases}
    for i, e in enumerate(ev[:t]):
        if e[0] == 'sync':
            last_sync[e[1]] = i
    for i, e in enumerate(ev[:t]):
        kind, name = e[0], e[1]
        if kind == 'create':
            files[name] = bytearray()
        elif kind == 'unlink':
            files[name] = None
        elif kind == 'write' and files[name] is not None:
            if i > last_sync[name] and rnd.random() < 0.5:
                continue        # not on the disk when the power went
            off, data = e[2], e[3]
            f = files[name]
            if len(f) < off:
                f.extend(b'\0' * (off - len(f)))
            f[off:off + len(data)] = data
    return files


def main():
    trace, outdir, nstates, seed = sys.argv[1:5]
    bases = dict(a.split('=', 1) for a in sys.argv[5:])
    rnd = random.Random(int(seed))
    ev = events(trace, set(bases))
    n = int(nstates)
    moments = sorted({0, len(ev)} | {rnd.randrange(len(ev) + 1)
                                    for _ in range(4 * n)})
    if len(moments) > n:
        moments = [moments[0]] + rnd.sample(moments[1:-1], n - 2) + \
            [moments[-1]]
    for k, t in enumerate(sorted(moments)):
        d = os.path.join(outdir, str(k))
        os.makedirs(d)
        for name, data in state(ev, t, bases, rnd).items():
            if data is not None:
                with open(os.path.join(d, name), 'wb') as f:
                    f.write(data)
        with open(os.path.join(d, 'at'), 'w') as f:
            f.write('%d of %d\n' % (t, len(ev)))
        if any(e[0] == 'unlink' for e in ev[:t]):
            open(os.path.join(d, 'ended'), 'w').close()
    print(len(ev))


if __name__ == '__main__':
    main()
