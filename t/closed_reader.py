#!/usr/bin/env python3
"""closed_reader.py [--ignore] CMD...: run CMD with its standard output a
pipe whose reading end is already closed (a reader that went away), with
SIGPIPE at its default action, or ignored with --ignore (a parent that
ignores it); print CMD's exit status (128 + N for signal N, as a shell)."""
import os
import signal
import subprocess
import sys

args = sys.argv[1:]
ignore = args and args[0] == '--ignore'
if ignore:
    args = args[1:]
r, w = os.pipe()
os.close(r)


def pre():
    signal.signal(signal.SIGPIPE, signal.SIG_IGN if ignore else signal.SIG_DFL)


p = subprocess.run(args, stdout=w, stderr=subprocess.DEVNULL, preexec_fn=pre,
                   restore_signals=False)
os.close(w)
print(p.returncode if p.returncode >= 0 else 128 - p.returncode)
