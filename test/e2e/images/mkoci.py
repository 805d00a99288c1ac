#!/usr/bin/env python3
"""Turn rootfs directories into an OCI image archive (tar) that
`ctr -n k8s.io images import` understands.  No registry, no external tools.

usage: mkoci.py ROOTFS IMAGE_NAME OUT.tar [--entrypoint JSON] [--cmd JSON]
                [--layer DIR]... [--user USER] [--env K=V]... [--keep-owners]
IMAGE_NAME must be fully qualified, e.g. localhost/cnperf-e2e/pause:v1 (a bare
name would be stored as is, but the CRI looks up docker.io/library/NAME)
ROOTFS is the first layer, each --layer DIR one more on top (images that share a
first layer share its blob). Files are owned by root unless --keep-owners (a
Debian tree with its system users' files). Layers are written through temporary
files, so a rootfs of hundreds of MB does not have to fit in memory.
"""
import argparse, hashlib, io, json, os, shutil, tarfile, tempfile


class HashingFile:
    """A write-only file that also hashes and counts what goes through it."""

    def __init__(self, f):
        self.f, self.h, self.n = f, hashlib.sha256(), 0

    def write(self, b):
        self.h.update(b)
        self.n += len(b)
        return self.f.write(b)

    def tell(self):
        return self.n


def layer_tar(rootfs, out, keep_owners):
    """Write ROOTFS as an uncompressed layer tar to the open file OUT: (digest, size)."""
    hf = HashingFile(out)
    with tarfile.open(fileobj=hf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for dirpath, dirnames, filenames in os.walk(rootfs):
            dirnames.sort()
            rel = os.path.relpath(dirpath, rootfs)
            if rel != ".":
                add(tf, dirpath, rel, keep_owners)
            for f in sorted(filenames):
                add(tf, os.path.join(dirpath, f), os.path.normpath(os.path.join(rel, f)), keep_owners)
            # symlinks to directories are listed in dirnames by os.walk but not followed
            for d in list(dirnames):
                p = os.path.join(dirpath, d)
                if os.path.islink(p):
                    add(tf, p, os.path.normpath(os.path.join(rel, d)), keep_owners)
                    dirnames.remove(d)
    return "sha256:" + hf.h.hexdigest(), hf.n


def add(tf, path, arc, keep_owners):
    ti = tf.gettarinfo(path, arcname=arc)
    if not keep_owners:
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
    else:
        ti.uname = ti.gname = ""
    ti.mtime = 0
    if ti.isreg():
        with open(path, "rb") as fh:
            tf.addfile(ti, fh)
    else:
        tf.addfile(ti)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rootfs")
    ap.add_argument("name")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", default="null")
    ap.add_argument("--cmd", default='["/bin/sh"]')
    ap.add_argument("--layer", action="append", default=[])
    ap.add_argument("--user", default="")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--keep-owners", action="store_true")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix=".mkoci.", dir=os.path.dirname(os.path.abspath(a.out)))
    try:
        blobs = []  # (digest, path)

        def blob_bytes(data):
            d = "sha256:" + hashlib.sha256(data).hexdigest()
            p = os.path.join(tmp, d[7:])
            with open(p, "wb") as f:
                f.write(data)
            blobs.append((d, p))
            return d, len(data)

        layers = []
        for i, d in enumerate([a.rootfs] + a.layer):
            p = os.path.join(tmp, "layer%d" % i)
            with open(p, "wb") as f:
                dig, size = layer_tar(d, f, a.keep_owners)
            blobs.append((dig, p))
            layers.append((dig, size))
        cfg = {
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + a.env,
            "Entrypoint": json.loads(a.entrypoint),
            "Cmd": json.loads(a.cmd),
            "WorkingDir": "/",
        }
        if a.user:
            cfg["User"] = a.user
        config = {
            "architecture": "amd64",
            "os": "linux",
            "created": "1970-01-01T00:00:00Z",
            "config": cfg,
            "rootfs": {"type": "layers", "diff_ids": [d for d, _ in layers]},
            "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "cnperf test/e2e/images/mkoci.py"}
                        for _ in layers],
        }
        cdig, csize = blob_bytes(json.dumps(config, sort_keys=True).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cdig, "size": csize},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": d, "size": s}
                       for d, s in layers],
        }
        mdig, msize = blob_bytes(json.dumps(manifest, sort_keys=True).encode())
        tag = a.name.rsplit(":", 1)[1] if ":" in a.name.rsplit("/", 1)[-1] else "latest"
        index = {
            "schemaVersion": 2,
            "manifests": [{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": mdig, "size": msize,
                "platform": {"architecture": "amd64", "os": "linux"},
                "annotations": {"io.containerd.image.name": a.name,
                                "org.opencontainers.image.ref.name": tag},
            }],
        }
        small = [("index.json", json.dumps(index).encode()),
                 ("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')]
        with tarfile.open(a.out + ".tmp", "w") as tf:
            for d in ("blobs", "blobs/sha256"):
                ti = tarfile.TarInfo(d); ti.type = tarfile.DIRTYPE; ti.mode = 0o755
                tf.addfile(ti)
            seen = set()
            for d, p in blobs:
                if d in seen:
                    continue
                seen.add(d)
                ti = tarfile.TarInfo("blobs/sha256/" + d[7:]); ti.size = os.path.getsize(p); ti.mode = 0o644
                with open(p, "rb") as f:
                    tf.addfile(ti, f)
            for name, data in small:
                ti = tarfile.TarInfo(name); ti.size = len(data); ti.mode = 0o644
                tf.addfile(ti, io.BytesIO(data))
        os.rename(a.out + ".tmp", a.out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{a.out}: {a.name} manifest={mdig} layers={'+'.join(str(s) for _, s in layers)} bytes")


if __name__ == "__main__":
    main()
