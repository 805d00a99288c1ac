#!/usr/bin/env python3
"""Turn a rootfs directory into a single-layer OCI image archive (tar) that
`ctr -n k8s.io images import` understands.  No registry, no external tools.

usage: mkoci.py ROOTFS IMAGE_NAME OUT.tar [--entrypoint JSON] [--cmd JSON]
IMAGE_NAME must be fully qualified, e.g. localhost/cnperf-e2e/pause:v1 (a bare
name would be stored as is, but the CRI looks up docker.io/library/NAME)
"""
import argparse, hashlib, io, json, os, tarfile


def layer_tar(rootfs):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for dirpath, dirnames, filenames in os.walk(rootfs):
            dirnames.sort()
            rel = os.path.relpath(dirpath, rootfs)
            if rel != ".":
                add(tf, dirpath, rel)
            for f in sorted(filenames):
                add(tf, os.path.join(dirpath, f), os.path.normpath(os.path.join(rel, f)))
            # symlinks to directories are listed in dirnames by os.walk but not followed
            for d in list(dirnames):
                p = os.path.join(dirpath, d)
                if os.path.islink(p):
                    add(tf, p, os.path.normpath(os.path.join(rel, d)))
                    dirnames.remove(d)
    return buf.getvalue()


def add(tf, path, arc):
    ti = tf.gettarinfo(path, arcname=arc)
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    ti.mtime = 0
    if ti.isreg():
        with open(path, "rb") as fh:
            tf.addfile(ti, fh)
    else:
        tf.addfile(ti)


def blob(out, data):
    d = hashlib.sha256(data).hexdigest()
    out.append(("blobs/sha256/" + d, data))
    return "sha256:" + d, len(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rootfs")
    ap.add_argument("name")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", default="null")
    ap.add_argument("--cmd", default='["/bin/sh"]')
    a = ap.parse_args()

    files = []
    layer = layer_tar(a.rootfs)
    ldig, lsize = blob(files, layer)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "Entrypoint": json.loads(a.entrypoint),
            "Cmd": json.loads(a.cmd),
            "WorkingDir": "/",
        },
        "rootfs": {"type": "layers", "diff_ids": [ldig]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "cnperf test/e2e/images/mkoci.py"}],
    }
    cdig, csize = blob(files, json.dumps(config, sort_keys=True).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cdig, "size": csize},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": ldig, "size": lsize}],
    }
    mdig, msize = blob(files, json.dumps(manifest, sort_keys=True).encode())
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
    files.append(("index.json", json.dumps(index).encode()))
    files.append(("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'))
    with tarfile.open(a.out, "w") as tf:
        for d in ("blobs", "blobs/sha256"):
            ti = tarfile.TarInfo(d); ti.type = tarfile.DIRTYPE; ti.mode = 0o755
            tf.addfile(ti)
        for name, data in files:
            ti = tarfile.TarInfo(name); ti.size = len(data); ti.mode = 0o644
            tf.addfile(ti, io.BytesIO(data))
    print(f"{a.out}: {a.name} manifest={mdig} layer={lsize} bytes")


if __name__ == "__main__":
    main()
