// Package image builds cnperf's agent image without a container engine: the cnperf binary
// (and, optionally, more host files with the shared libraries they need) as layers on a base
// image taken from a registry, from an archive, or from scratch, written as an OCI archive,
// pushed to a registry, or loaded into kind or containerd.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/cnperf/cnperf/internal/procexec"
)

// Scratch is the --base value for an image with nothing but what cnperf needs.
const Scratch = "scratch"

// BinaryPath is where the image holds cnperf (as the Containerfile puts it).
const BinaryPath = "/usr/local/bin/cnperf"

// DefaultCmd keeps a pod without a command running (as the Containerfile's CMD).
var DefaultCmd = []string{"sleep", "infinity"}

// Add is a host file or directory to put into the image.
type Add struct {
	Src string // host path
	Dst string // path in the image (default: Src; a directory's tree goes under Dst)
}

// ParseAdd parses SRC[:DST].
func ParseAdd(s string) (Add, error) {
	src, dst, _ := strings.Cut(s, ":")
	if src == "" {
		return Add{}, fmt.Errorf("--add %q: want SRC[:DST]", s)
	}
	if dst == "" {
		dst = src
	}
	if !path.IsAbs(dst) {
		return Add{}, fmt.Errorf("--add %q: the path in the image (%s) must be absolute", s, dst)
	}
	return Add{Src: src, Dst: path.Clean(dst)}, nil
}

// BuildOptions says what goes into the image.
type BuildOptions struct {
	Binary  string // the cnperf binary (a static linux executable)
	Version string // the binary's version (recorded as org.opencontainers.image.version)
	Base    string // Scratch, an archive (OCI layout tar or directory, docker save tar) or a reference
	Shell   string // with Scratch: a static busybox for sh, sleep, kill and timeout ("" = find one)
	Adds    []Add
	Log     io.Writer
}

// Build assembles the image. Its platform is the binary's (linux and the ELF machine).
// Call done (never nil) once the image has been written or pushed: a base read from an
// archive is read lazily from a temporary directory that done removes.
func Build(ctx context.Context, o BuildOptions) (img v1.Image, done func(), err error) {
	done = func() {}
	img, err = build(ctx, o, &done)
	if err != nil {
		done()
		return nil, func() {}, err
	}
	return img, done, nil
}

func build(ctx context.Context, o BuildOptions, done *func()) (v1.Image, error) {
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "image: "+format+"\n", a...)
		}
	}
	bin, err := inspectELF(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("cnperf binary: %w", err)
	}
	plat := v1.Platform{OS: "linux", Architecture: bin.arch}
	if o.Base == "" {
		o.Base = Scratch
	}
	if bin.interp != "" && o.Base == Scratch {
		return nil, fmt.Errorf("cnperf binary %s is dynamically linked (interpreter %s): a scratch image needs a static one (CGO_ENABLED=0 go build ./cmd/cnperf), or use --base", o.Binary, bin.interp)
	}
	base, err := loadBase(ctx, o.Base, plat, done)
	if err != nil {
		return nil, err
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, fmt.Errorf("base image: %w", err)
	}
	layerType := types.OCILayer
	if mt == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	img := base
	appendLayer := func(what string, files []file) error {
		l, err := layerOf(files, layerType)
		if err != nil {
			return fmt.Errorf("%s layer: %w", what, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: layerType,
			History: v1.History{Created: v1.Time{Time: time.Unix(0, 0).UTC()}, CreatedBy: "cnperf image build: " + what, Comment: what}})
		if err != nil {
			return fmt.Errorf("%s layer: %w", what, err)
		}
		size, _ := l.Size()
		logf("layer %s: %d files, %d bytes compressed", what, len(files), size)
		return nil
	}
	if o.Base == Scratch {
		sh, err := shellFiles(o.Shell, bin.arch)
		if err != nil {
			return nil, err
		}
		if err := appendLayer("busybox (sh, sleep, kill, timeout) and /etc", sh); err != nil {
			return nil, err
		}
	}
	if len(o.Adds) > 0 {
		files, err := addFiles(o.Adds, bin.arch)
		if err != nil {
			return nil, err
		}
		if err := appendLayer("added files", files); err != nil {
			return nil, err
		}
	}
	if err := appendLayer("cnperf "+o.Version, []file{{path: BinaryPath, src: o.Binary, mode: 0o755}}); err != nil {
		return nil, err
	}

	return withConfig(img, plat, o)
}

// withConfig is img with cnperf's image config: the platform, a fixed creation time, the
// default command, PATH and working directory when the base has none, and cnperf's labels.
func withConfig(img v1.Image, plat v1.Platform, o BuildOptions) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, ""
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.Entrypoint = nil
	cf.Config.Cmd = append([]string(nil), DefaultCmd...)
	if len(cf.Config.Env) == 0 {
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	if cf.Config.WorkingDir == "" {
		cf.Config.WorkingDir = "/"
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.title":       "cnperf agent",
		"org.opencontainers.image.description": "cnperf built by cnperf image build on " + o.Base,
		"org.opencontainers.image.source":      "https://github.com/cnperf/cnperf",
		"org.opencontainers.image.version":     o.Version,
	} {
		cf.Config.Labels[k] = v
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return img, nil
}

// elfInfo is what Build needs to know of an executable.
type elfInfo struct {
	arch   string // GOARCH name
	interp string // dynamic loader, "" for a static executable
	needed []string
}

var machines = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm",
	elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv64",
}

func inspectELF(p string) (elfInfo, error) {
	if _, err := os.Stat(p); err != nil {
		return elfInfo{}, err
	}
	f, err := elf.Open(p)
	if err != nil {
		return elfInfo{}, fmt.Errorf("%s is not a Linux executable (ELF): an image needs a linux build of cnperf (GOOS=linux CGO_ENABLED=0 go build ./cmd/cnperf, or the release's linux archive): pass it with --binary (%v)", p, err)
	}
	defer f.Close()
	arch, ok := machines[f.Machine]
	if !ok {
		return elfInfo{}, fmt.Errorf("%s: unsupported ELF machine %s", p, f.Machine)
	}
	info := elfInfo{arch: arch}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b, err := io.ReadAll(prog.Open())
			if err != nil {
				return elfInfo{}, fmt.Errorf("%s: read its interpreter: %w", p, err)
			}
			info.interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if f.Section(".dynamic") != nil {
		info.needed, err = f.ImportedLibraries()
		if err != nil {
			return elfInfo{}, fmt.Errorf("%s: shared libraries: %w", p, err)
		}
	}
	return info, nil
}

// loadBase returns the base image for plat: scratch, an archive on disk, or a reference
// pulled from its registry (credentials from the Docker config, as docker and crane use).
func loadBase(ctx context.Context, base string, plat v1.Platform, done *func()) (v1.Image, error) {
	if base == Scratch {
		return mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), nil
	}
	if _, err := os.Stat(base); err == nil {
		img, cleanup, err := ReadArchive(base, plat)
		*done = cleanup
		if err != nil {
			return nil, fmt.Errorf("--base %s: %w", base, err)
		}
		return img, nil
	}
	ref, err := name.ParseReference(base)
	if err != nil {
		return nil, fmt.Errorf("--base %q is neither %q, a file nor an image reference: %w", base, Scratch, err)
	}
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(plat), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, fmt.Errorf("--base %s: pull: %w", base, err)
	}
	return img, nil
}

// file is one entry of a layer: a regular file (src, or data), a directory or a symlink.
type file struct {
	path string // absolute path in the image
	src  string // host file to copy (regular files)
	data []byte // contents when src is ""
	link string // symlink target
	dir  bool
	mode int64
}

// layerOf writes files (and their parent directories) as a deterministic layer.
func layerOf(files []file, mt types.MediaType) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	sort.SliceStable(files, func(i, j int) bool { return files[i].path < files[j].path })
	var mkdirs func(d string) error
	mkdirs = func(d string) error {
		if d == "/" || d == "." || dirs[d] {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: time.Unix(0, 0)})
	}
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.path] {
			continue
		}
		seen[f.path] = true
		if err := mkdirs(path.Dir(f.path)); err != nil {
			return nil, err
		}
		h := &tar.Header{Name: strings.TrimPrefix(f.path, "/"), Mode: f.mode, ModTime: time.Unix(0, 0)}
		switch {
		case f.dir:
			if dirs[f.path] {
				continue
			}
			dirs[f.path] = true
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
		case f.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.link, 0o777
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
		default:
			data := f.data
			if f.src != "" {
				var err error
				if data, err = os.ReadFile(f.src); err != nil {
					return nil, err
				}
			}
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
		tarball.WithMediaType(mt))
}

// shellApplets, when the busybox cannot run here to list its own, are what cnperf runs in its pods (the exec wrapper, the idle loop, kill) and
// what helps a person who execs in.
var shellApplets = []string{"sh", "sleep", "kill", "timeout", "cat", "echo", "ls", "ps", "env", "true",
	"false", "test", "[", "mkdir", "rm", "nc", "wget", "ip", "nslookup", "hostname", "uname", "id"}

// shellFiles is a scratch image's busybox with its applets and a minimal /etc and /tmp.
func shellFiles(shell, arch string) ([]file, error) {
	if shell == "" {
		for _, c := range []string{"/usr/bin/busybox", "/bin/busybox"} {
			if _, err := os.Stat(c); err == nil {
				shell = c
				break
			}
		}
	}
	if shell == "" {
		return nil, errors.New("a scratch image needs a static busybox for sh, sleep and kill (apt-get install busybox-static, or --shell PATH), or use --base IMAGE")
	}
	info, err := inspectELF(shell)
	if err != nil {
		return nil, fmt.Errorf("--shell: %w", err)
	}
	if info.interp != "" {
		return nil, fmt.Errorf("--shell %s is dynamically linked: a scratch image needs busybox-static", shell)
	}
	if info.arch != arch {
		return nil, fmt.Errorf("--shell %s is for %s, the cnperf binary for %s", shell, info.arch, arch)
	}
	files := []file{
		{path: "/bin/busybox", src: shell, mode: 0o755},
		{path: "/etc/passwd", data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"), mode: 0o644},
		{path: "/etc/group", data: []byte("root:x:0:\nnogroup:x:65534:\n"), mode: 0o644},
		{path: "/etc/nsswitch.conf", data: []byte("hosts: files dns\nservices: files\n"), mode: 0o644},
		{path: "/tmp", dir: true, mode: 0o1777},
		{path: "/var/tmp", dir: true, mode: 0o1777},
		{path: "/root", dir: true, mode: 0o700},
	}
	applets := shellApplets
	list := exec.Command(shell, "--list")
	list.Env = procexec.Environ()              // no credentials for busybox
	if out, err := list.Output(); err == nil { // it runs here: every applet
		applets = strings.Fields(string(out))
	}
	for _, a := range applets {
		if a != "busybox" && !strings.Contains(a, "/") {
			files = append(files, file{path: "/bin/" + a, link: "busybox"})
		}
	}
	return files, nil
}

// libDirs are where the dynamic loader looks for libraries, per architecture.
var libDirs = map[string][]string{
	"amd64": {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"},
	"arm64": {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"},
}

// addFiles expands --add: a directory's tree as it is (symlinks kept), a file with the
// shared libraries it needs, found as the dynamic loader would (copied with symlinks
// resolved, at the paths where the loader looks).
func addFiles(adds []Add, arch string) ([]file, error) {
	var files []file
	libs := map[string]bool{}
	var addLibs func(info elfInfo, who string) error
	addLibs = func(info elfInfo, who string) error {
		if info.interp != "" && !libs[info.interp] {
			libs[info.interp] = true
			files = append(files, file{path: info.interp, src: info.interp, mode: 0o755})
		}
		for _, so := range info.needed {
			found := ""
			for _, d := range libDirs[arch] {
				if _, err := os.Stat(filepath.Join(d, so)); err == nil {
					found = filepath.Join(d, so)
					break
				}
			}
			if found == "" {
				return fmt.Errorf("--add %s: shared library %s not found in %s", who, so, strings.Join(libDirs[arch], ", "))
			}
			if libs[found] {
				continue
			}
			libs[found] = true
			files = append(files, file{path: found, src: found, mode: 0o644})
			li, err := inspectELF(found)
			if err != nil {
				return fmt.Errorf("--add %s: %w", who, err)
			}
			li.interp = "" // a library's PT_INTERP (libc has one) is not a dependency
			if err := addLibs(li, who); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range adds {
		st, err := os.Stat(a.Src)
		if err != nil {
			return nil, fmt.Errorf("--add %s: %w", a.Src, err)
		}
		if st.IsDir() {
			tree, err := treeFiles(a)
			if err != nil {
				return nil, fmt.Errorf("--add %s: %w", a.Src, err)
			}
			files = append(files, tree...)
			continue
		}
		files = append(files, file{path: a.Dst, src: a.Src, mode: int64(st.Mode().Perm())})
		if info, err := inspectELF(a.Src); err == nil {
			if info.arch != arch {
				return nil, fmt.Errorf("--add %s is for %s, the cnperf binary for %s", a.Src, info.arch, arch)
			}
			if err := addLibs(info, a.Src); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// treeFiles are the files of a directory added as it is: its directories (with their
// permissions and sticky bit, but not "/"), regular files and symlinks, under a.Dst.
func treeFiles(a Add) ([]file, error) {
	var files []file
	err := filepath.WalkDir(a.Src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a.Src, p)
		dst := path.Join(a.Dst, filepath.ToSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files = append(files, file{path: dst, link: t})
		case fi.IsDir():
			if dst != "/" {
				mode := int64(fi.Mode().Perm())
				if fi.Mode()&fs.ModeSticky != 0 {
					mode |= 0o1000
				}
				files = append(files, file{path: dst, dir: true, mode: mode})
			}
		case fi.Mode().IsRegular():
			files = append(files, file{path: dst, src: p, mode: int64(fi.Mode().Perm())})
		}
		return nil
	})
	return files, err
}

// BinaryVersion asks a cnperf binary for the image it deploys (`cnperf version --image`)
// and its version; it fails when the binary cannot run here (another OS or architecture).
func BinaryVersion(ctx context.Context, bin string) (image, ver string, err error) {
	cmd := exec.CommandContext(ctx, bin, "version", "--image")
	cmd.Env = procexec.Environ() // no credentials for another cnperf binary
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("%s version --image: %w", bin, err)
	}
	image = strings.TrimSpace(string(out))
	_, ver, ok := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	if !ok || image == "" {
		return "", "", fmt.Errorf("%s version --image printed %q, not an image", bin, image)
	}
	return image, ver, nil
}
