#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# memscan.py PID HEX...: for each pattern, how many times it is in the
# process's readable memory.
import re, sys
pid, pats = sys.argv[1], [bytes.fromhex(h) for h in sys.argv[2:]]
counts = [0] * len(pats)
with open('/proc/%s/maps' % pid) as maps, open('/proc/%s/mem' % pid, 'rb', 0) as mem:
    for line in maps:
        f = line.split()
        if 'r' not in f[1] or (len(f) > 5 and f[5] in ('[vvar]', '[vsyscall]')):
            continue
        a, b = (int(x, 16) for x in f[0].split('-'))
        try:
            mem.seek(a)
            data = mem.read(b - a)
        except (OSError, ValueError, OverflowError):
            continue
        for i, p in enumerate(pats):
            counts[i] += data.count(p)
print(' '.join(map(str, counts)))
