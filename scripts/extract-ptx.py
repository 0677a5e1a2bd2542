#!/usr/bin/env python3
"""Writes the PTX held in the gpu.binary ops of ism-opt's output.

    ism-opt kernel.mlir --ism-to-ptx | scripts/extract-ptx.py > kernel.ptx

Reads MLIR text on standard input (or a file argument) and prints the
`assembly = "..."` strings of every #gpu.object, unescaped. Exits non-zero
when there is none.
"""
import re
import sys


def unescape(text: str) -> str:
    # MLIR prints non-printable bytes as \XX (two hex digits), plus \\ and \".
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "\\\"":
                out += nxt.encode()
                i += 2
                continue
            out += bytes([int(text[i + 1:i + 3], 16)])
            i += 3
            continue
        out += c.encode()
        i += 1
    return out.decode()


def main() -> int:
    source = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
    blobs = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', source)
    if not blobs:
        print("extract-ptx: no gpu.binary with PTX assembly in the input "
              "(compile with --ism-to-ptx)", file=sys.stderr)
        return 1
    for blob in blobs:
        sys.stdout.write(unescape(blob))
    return 0


if __name__ == "__main__":
    sys.exit(main())
