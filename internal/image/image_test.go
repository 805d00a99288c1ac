package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// staticBinary is a static ELF of this machine to stand for cnperf (the test binary itself
// is dynamically linked): busybox-static, which the e2e harness and CI install.
func staticBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/busybox", "/bin/busybox"} {
		if info, err := inspectELF(p); err == nil && info.interp == "" {
			return p
		}
	}
	t.Skip("no static busybox (apt-get install busybox-static)")
	return ""
}

// layerFiles reads an image's layers into path -> (content, or "-> target" for symlinks).
func layerFiles(t *testing.T, img v1.Image) []map[string]string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch h.Typeflag {
			case tar.TypeSymlink:
				m[h.Name] = "-> " + h.Linkname
			case tar.TypeReg:
				b, _ := io.ReadAll(tr)
				m[h.Name] = string(b)
			case tar.TypeDir:
				m[h.Name] = "dir"
			}
		}
		rc.Close()
		out = append(out, m)
	}
	return out
}

// TestBuildScratchArchive builds from scratch, writes the OCI archive, reads it back with
// go-containerregistry's layout package and checks index, config and layers.
func TestBuildScratchArchive(t *testing.T) {
	bin := staticBinary(t)
	img, done, err := Build(context.Background(), BuildOptions{Binary: bin, Version: "v9.8.7", Base: Scratch})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	out := filepath.Join(t.TempDir(), "agent.tar")
	if err := WriteArchive(img, "ghcr.io/cnperf/cnperf:v9.8.7", out); err != nil {
		t.Fatal(err)
	}
	dir, err := untarTemp(out)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 1 {
		t.Fatalf("index has %d manifests", len(im.Manifests))
	}
	d := im.Manifests[0]
	if d.Annotations["io.containerd.image.name"] != "ghcr.io/cnperf/cnperf:v9.8.7" || d.Annotations["org.opencontainers.image.ref.name"] != "v9.8.7" ||
		d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Architecture != runtime.GOARCH {
		t.Errorf("index entry %+v %+v", d.Annotations, d.Platform)
	}
	back, err := idx.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cf.Config.Cmd, " ") != "sleep infinity" || cf.Config.Entrypoint != nil || cf.OS != "linux" || cf.Architecture != runtime.GOARCH ||
		cf.Config.Labels["org.opencontainers.image.version"] != "v9.8.7" || !strings.Contains(strings.Join(cf.Config.Env, " "), "PATH=") {
		b, _ := json.Marshal(cf)
		t.Errorf("config %s", b)
	}
	if len(cf.History) != 2 || !strings.Contains(cf.History[1].CreatedBy, "cnperf v9.8.7") {
		t.Errorf("history %+v", cf.History)
	}
	files := layerFiles(t, back)
	if len(files) != 2 {
		t.Fatalf("%d layers, want busybox and cnperf", len(files))
	}
	want, _ := os.ReadFile(bin)
	if files[1]["usr/local/bin/cnperf"] != string(want) {
		t.Error("the cnperf layer does not hold the binary at usr/local/bin/cnperf")
	}
	for p, w := range map[string]string{"bin/sh": "-> busybox", "bin/sleep": "-> busybox", "bin/kill": "-> busybox", "bin/timeout": "-> busybox", "tmp/": "dir"} {
		if files[0][p] != w {
			t.Errorf("busybox layer: %s = %q, want %q", p, files[0][p], w)
		}
	}
	if !strings.HasPrefix(files[0]["etc/passwd"], "root:x:0:0:") {
		t.Errorf("no /etc/passwd")
	}
}

func TestBuildErrors(t *testing.T) {
	bin := staticBinary(t)
	notELF := filepath.Join(t.TempDir(), "cnperf")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dynamic := "/usr/bin/iperf3"
	if info, err := inspectELF(dynamic); err != nil || info.interp == "" {
		t.Skip("no dynamically linked /usr/bin/iperf3")
	}
	for _, c := range []struct {
		name string
		o    BuildOptions
		want string
	}{
		{"not ELF", BuildOptions{Binary: notELF}, "is not a Linux executable (ELF): an image needs a linux build of cnperf"},
		{"dynamic on scratch", BuildOptions{Binary: dynamic}, "is dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2): a scratch image needs a static one"},
		{"dynamic shell", BuildOptions{Binary: bin, Shell: dynamic}, "--shell /usr/bin/iperf3 is dynamically linked"},
		{"missing add", BuildOptions{Binary: bin, Adds: []Add{{Src: "/nonexistent/tool", Dst: "/usr/bin/tool"}}}, "--add /nonexistent/tool"},
		{"base neither file nor reference", BuildOptions{Binary: bin, Base: "Not A Ref!"}, `--base "Not A Ref!" is neither "scratch", a file nor an image reference`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, done, err := Build(context.Background(), c.o)
			done()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	for _, c := range []struct{ in, want string }{{":/x", "want SRC[:DST]"}, {"/a:rel", "must be absolute"}} {
		if _, err := ParseAdd(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseAdd(%q) = %v, want %q", c.in, err, c.want)
		}
	}
	if err := Load(context.Background(), "x.tar", "docker", nil); err == nil || !strings.Contains(err.Error(), "want kind:CLUSTER, containerd or containerd:SOCKET") {
		t.Errorf("Load docker: %v", err)
	}
}

// TestAddWithLibraries adds a dynamically linked tool: the tool, its loader and every
// library it needs (found as the loader would) must be in the layer.
func TestAddWithLibraries(t *testing.T) {
	bin := staticBinary(t)
	tool := "/usr/bin/iperf3"
	info, err := inspectELF(tool)
	if err != nil || info.interp == "" {
		t.Skip("no dynamically linked /usr/bin/iperf3")
	}
	img, done, err := Build(context.Background(), BuildOptions{Binary: bin, Version: "v0", Adds: []Add{{Src: tool, Dst: tool}}})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	files := layerFiles(t, img)
	if len(files) != 3 {
		t.Fatalf("%d layers, want busybox, added files, cnperf", len(files))
	}
	added := files[1]
	for _, p := range []string{"usr/bin/iperf3", strings.TrimPrefix(info.interp, "/")} {
		if added[p] == "" {
			t.Errorf("added layer lacks %s (has %d files)", p, len(added))
		}
	}
	for _, so := range info.needed {
		found := false
		for p := range added {
			found = found || filepath.Base(p) == so
		}
		if !found {
			t.Errorf("added layer lacks %s, which iperf3 needs", so)
		}
	}
}

// TestPushAndBase pushes to a real registry (go-containerregistry's, on loopback), then
// builds on that image pulled by reference and on the archive, and pushes an archive.
func TestPushAndBase(t *testing.T) {
	bin := staticBinary(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	img, done, err := Build(ctx, BuildOptions{Binary: bin, Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	ref := host + "/cnperf/cnperf:v1"
	dig, err := Push(ctx, img, ref)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := img.Digest(); dig != want {
		t.Errorf("pushed digest %s, built %s", dig, want)
	}
	onRef, done, err := Build(ctx, BuildOptions{Binary: bin, Version: "v2", Base: ref})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	archive := filepath.Join(t.TempDir(), "a.tar")
	if err := WriteArchive(img, ref, archive); err != nil {
		t.Fatal(err)
	}
	onArchive, done, err := Build(ctx, BuildOptions{Binary: bin, Version: "v2", Base: archive})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	for name, im := range map[string]v1.Image{"reference": onRef, "archive": onArchive} {
		layers, _ := im.Layers()
		cf, _ := im.ConfigFile()
		if len(layers) != 3 || cf.Config.Labels["org.opencontainers.image.version"] != "v2" {
			t.Errorf("on the %s: %d layers (want the base's 2 and cnperf), version label %q", name, len(layers), cf.Config.Labels["org.opencontainers.image.version"])
		}
	}
	fromArchive, doneArchive, err := ReadArchive(archive, v1.Platform{OS: "linux", Architecture: "s390x"})
	if err != nil {
		t.Fatalf("an archive's only image is taken whatever its platform: %v", err)
	}
	defer doneArchive()
	if _, err := Push(ctx, fromArchive, host+"/other/cnperf:v1"); err != nil {
		t.Fatal(err)
	}
}

// TestImportRunContainerd imports the archive into a real containerd (a private one, started
// here) with ctr, as --load containerd does, and runs the image: sh and the added tool run.
func TestImportRunContainerd(t *testing.T) {
	bin := staticBinary(t)
	for _, tool := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (apt-get install containerd runc)", tool)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("containerd needs root")
	}
	if _, err := os.Stat("/usr/bin/iperf3"); err != nil {
		t.Skip("no /usr/bin/iperf3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "cnperf-ctd-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	var logb bytes.Buffer
	ctd := exec.Command("containerd", "--config", cfg, "--address", sock, "--root", filepath.Join(dir, "root"), "--state", filepath.Join(dir, "state"))
	ctd.Stdout, ctd.Stderr = &logb, &logb
	if err := ctd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ctd.Process.Kill()
		_ = ctd.Wait()
		// the container's rootfs mounts are gone with --rm; unmount what containerd left
		_ = exec.Command("umount", "-R", filepath.Join(dir, "state")).Run()
	}()
	ctr := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", sock, "-n", "k8s.io"}, args...)...).CombinedOutput()
		return string(out), err
	}
	for i := 0; ; i++ {
		if _, err := ctr("version"); err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("containerd did not start:\n%s", logb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	img, done, err := Build(ctx, BuildOptions{Binary: bin, Version: "v9.8.7", Adds: []Add{{Src: "/usr/bin/iperf3", Dst: "/usr/bin/iperf3"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	archive := filepath.Join(dir, "agent.tar")
	const name = "ghcr.io/cnperf/cnperf:v9.8.7-test"
	if err := WriteArchive(img, name, archive); err != nil {
		t.Fatal(err)
	}
	if err := Load(ctx, archive, "containerd:"+sock, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := ctr("images", "ls", "-q"); err != nil || !strings.Contains(out, name) {
		t.Fatalf("ctr images ls: %v\n%s", err, out)
	}
	// The container checks its own results and answers with its exit status, which ctr run
	// returns as its own: ctr (containerd 1.6.20) now and then loses the tail of a container's
	// output (1 run in 60 on a loaded machine printed iperf3's line without the echo after it).
	const script = `case "$(iperf3 --version)" in "iperf 3"*) ;; *) exit 3 ;; esac; timeout 1 sleep 0`
	out, err := ctr("run", "--rm", name, "cnperf-image-test", "sh", "-c", script)
	if err != nil {
		t.Errorf("ctr run sh -c '%s': %v (exit 3: iperf3 did not print its version)\n%s\ncontainerd log:\n%s", script, err, out, logb.String())
	}
	// and a container's failure reaches ctr's exit status
	if out, err := ctr("run", "--rm", name, "cnperf-image-test", "sh", "-c", "exit 7"); err == nil || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("ctr run sh -c 'exit 7': %v, want exit status 7\n%s", err, out)
	}
}
