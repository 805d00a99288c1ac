#!/usr/bin/env python3
"""Write a directory tree as a gzip-compressed newc cpio archive (an initramfs), owned by root.

usage: mkinitramfs.py DIR OUT.img
"""
import gzip, os, stat, sys


def entries(root):
    yield ".", os.lstat(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for n in sorted(dirnames) + sorted(filenames):
            p = os.path.join(dirpath, n)
            yield os.path.relpath(p, root), os.lstat(p)


def header(ino, st, name, size):
    fields = (ino, st.st_mode, 0, 0, 1 if not stat.S_ISDIR(st.st_mode) else 2, 0, size,
              0, 0, 0, 0, len(name) + 1, 0)
    return ("070701" + "".join("%08x" % f for f in fields)).encode()


def pad(n):
    return b"\0" * ((4 - n % 4) % 4)


def main():
    root, out = sys.argv[1], sys.argv[2]
    with gzip.open(out + ".tmp", "wb", compresslevel=6) as w:
        ino = 1
        for rel, st in entries(root):
            p = os.path.join(root, rel)
            if stat.S_ISLNK(st.st_mode):
                data = os.readlink(p).encode()
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    data = f.read()
            else:
                data = b""
            name = rel.encode()
            h = header(ino, st, name, len(data))
            w.write(h + name + b"\0" + pad(len(h) + len(name) + 1))
            w.write(data + pad(len(data)))
            ino += 1
        name = b"TRAILER!!!"
        h = ("070701" + "%08x" % 0 + "%08x" % 0 + "%08x" % 0 * 9 + "%08x" % (len(name) + 1) + "%08x" % 0).encode()
        w.write(h + name + b"\0" + pad(len(h) + len(name) + 1))
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    main()
