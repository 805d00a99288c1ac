package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cnperf/cnperf/internal/procexec"
)

// WriteArchive writes img as an OCI image layout in a tar file (what `ctr images import`,
// `kind load image-archive`, podman, skopeo and crane read), named ref: the index entry
// carries io.containerd.image.name (containerd's name for it) and
// org.opencontainers.image.ref.name.
func WriteArchive(img v1.Image, ref, out string) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), ".cnperf-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	refName := r.Identifier()
	if err := lp.AppendImage(img, layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}),
		layout.WithAnnotations(map[string]string{"io.containerd.image.name": r.Name(), "org.opencontainers.image.ref.name": refName})); err != nil {
		return fmt.Errorf("write the image layout: %w", err)
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	werr := tarDir(f, dir)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", out, werr)
	}
	return os.Rename(tmp, out)
}

// tarDir writes dir's tree (regular files and directories) into w, paths relative to dir.
func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// ReadArchive reads the image for plat from an OCI layout (a directory or a tar of one, as
// WriteArchive writes) or a `docker save` tar. The image's blobs are read lazily: call
// done (never nil) when the image is no longer used, to remove an extracted layout.
func ReadArchive(p string, plat v1.Platform) (img v1.Image, done func(), err error) {
	done = func() {}
	st, err := os.Stat(p)
	if err != nil {
		return nil, done, err
	}
	dir := p
	if !st.IsDir() {
		isLayout, err := tarHas(p, "oci-layout")
		if err != nil {
			return nil, done, err
		}
		if !isLayout {
			img, err := tarball.ImageFromPath(p, nil)
			if err != nil {
				return nil, done, fmt.Errorf("neither an OCI layout nor a docker save archive: %w", err)
			}
			return img, done, nil
		}
		if dir, err = untarTemp(p); err != nil {
			return nil, done, err
		}
		done = func() { os.RemoveAll(dir) }
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err == nil {
		img, err = imageFor(idx, plat)
	}
	if err != nil {
		done()
		return nil, func() {}, err
	}
	return img, done, nil
}

// imageFor picks plat's image from an index (nested indexes too); an entry without a
// image is taken when it is the only one, whatever its platform.
func imageFor(idx v1.ImageIndex, plat v1.Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var seen []string
	for _, d := range m.Manifests {
		if d.MediaType.IsIndex() {
			sub, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			if img, err := imageFor(sub, plat); err == nil {
				return img, nil
			}
			continue
		}
		if len(m.Manifests) == 1 {
			return idx.Image(d.Digest)
		}
		if d.Platform != nil {
			seen = append(seen, d.Platform.OS+"/"+d.Platform.Architecture)
			if d.Platform.OS == plat.OS && d.Platform.Architecture == plat.Architecture {
				return idx.Image(d.Digest)
			}
		}
	}
	return nil, fmt.Errorf("no image for %s/%s (it has: %s)", plat.OS, plat.Architecture, strings.Join(seen, ", "))
}

// eachTarEntry calls fn with every entry of the tar archive at p, in order, until fn says it
// is done or returns an error; a read error is wrapped as bad says.
func eachTarEntry(p string, bad func(error) error, fn func(h *tar.Header, r io.Reader) (done bool, err error)) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return bad(err)
		}
		if done, err := fn(h, tr); done || err != nil {
			return err
		}
	}
}

func tarHas(p, want string) (has bool, err error) {
	err = eachTarEntry(p, func(err error) error { return fmt.Errorf("%s: not a tar archive: %w", p, err) },
		func(h *tar.Header, _ io.Reader) (bool, error) {
			has = strings.TrimPrefix(h.Name, "./") == want
			return has, nil
		})
	return has, err
}

func untarTemp(p string) (dir string, err error) {
	dir, err = os.MkdirTemp("", "cnperf-base-")
	if err != nil {
		return "", err
	}
	err = eachTarEntry(p, func(err error) error { return fmt.Errorf("%s: %w", p, err) },
		func(h *tar.Header, r io.Reader) (bool, error) { return false, untarEntry(dir, h, r) })
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// untarEntry writes one entry of an archive below dir: directories and regular files, nothing
// outside dir.
func untarEntry(dir string, h *tar.Header, r io.Reader) error {
	rel := filepath.Clean(strings.TrimPrefix(h.Name, "./"))
	if rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return nil
	}
	dst := filepath.Join(dir, rel)
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(dst, 0o755)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, r)
		return errors.Join(err, out.Close()) // a file written is whole only once closed
	}
	return nil
}

// Push writes img to ref's registry (credentials from the Docker config, as docker login
// and crane auth write it).
func Push(ctx context.Context, img v1.Image, ref string) (v1.Hash, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image name %q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return img.Digest()
}

// Load puts an archive written by WriteArchive where a cluster's nodes find it:
//
//	kind:NAME           kind load image-archive ARCHIVE --name NAME
//	containerd          ctr -n k8s.io images import ARCHIVE (this machine's containerd)
//	containerd:SOCKET   the same through the containerd at SOCKET
func Load(ctx context.Context, archive, target string, log io.Writer) error {
	kind, arg, _ := strings.Cut(target, ":")
	var argv []string
	switch kind {
	case "kind":
		if arg == "" {
			return fmt.Errorf("--load %q: want kind:CLUSTER", target)
		}
		argv = []string{"kind", "load", "image-archive", archive, "--name", arg}
	case "containerd":
		argv = []string{"ctr"}
		if arg != "" {
			argv = append(argv, "--address", arg)
		}
		argv = append(argv, "-n", "k8s.io", "images", "import", archive)
	default:
		return fmt.Errorf("--load %q: want kind:CLUSTER, containerd or containerd:SOCKET", target)
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("--load %s needs %s on PATH: %w", target, argv[0], err)
	}
	if log != nil {
		fmt.Fprintf(log, "image: %s\n", strings.Join(argv, " "))
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = procexec.Environ() // no credentials for kind or ctr
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
