"""The read floor: a plain Python process that walks a tree and reads every file's bytes."""

import os
import sys

total = 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(files):
        with open(os.path.join(root, name), "rb") as fh:
            total += len(fh.read())
print(total)
