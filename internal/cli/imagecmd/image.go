// Package imagecmd is `cnperf image build` and `cnperf image push`: the agent image made
// from this cnperf without a container engine.
package imagecmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/image"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/version"
)

// Options are the flags shared by build and push.
type Options struct {
	Binary string
	Base   string
	Shell  string
	Adds   []string
	Tag    string
	Output string
	Loads  []string
}

// NewCommand returns `cnperf image` with its subcommands.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "image",
		Short: "Build, push or load the agent image without a container engine",
		Long: `The agent image is what cnperf deploys in the cluster: cnperf itself (the built-in load
generator) and, with the Containerfile's image, the tool of every driver
(` + all.Joined() + `).
These commands make it from this cnperf binary, without Docker or Podman, named as this binary
deploys it (` + "`cnperf version --image`" + `), so binary and image agree.`,
	}
	c.AddCommand(newBuildCommand(streams), newPushCommand(streams))
	return c
}

func (o *Options) addBuildFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&o.Binary, "binary", "", "the cnperf binary to put in the image, a static linux executable (default: this one)")
	fs.StringVar(&o.Base, "base", image.Scratch, `base image: "scratch" (cnperf and a static busybox: the native driver only), an image reference pulled from its registry (for instance an older agent image with the tools), or an archive (OCI layout tar or directory, docker save tar)`)
	fs.StringVar(&o.Shell, "shell", "", "with --base scratch: the static busybox that gives sh, sleep, kill and timeout (default /usr/bin/busybox or /bin/busybox)")
	fs.StringArrayVar(&o.Adds, "add", nil, "add a host file (with the shared libraries it needs) or a directory tree, SRC[:DST] (repeatable), e.g. --add /usr/bin/iperf3")
	fs.StringVar(&o.Tag, "tag", "", "the image's name (default: the image the binary deploys, cnperf version --image)")
}

func newBuildCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{}
	c := &cobra.Command{
		Use:   "build",
		Short: "Write the agent image as an OCI archive, optionally loaded into kind or containerd",
		Example: `  # cnperf-agent.tar: cnperf on busybox, named as cnperf deploys it
  cnperf image build
  cnperf image build --load kind:perf     # ... and load it into the kind cluster "perf"
  cnperf image build --load containerd    # ... into this node's containerd (ctr -n k8s.io)
  cnperf image build --add /usr/bin/iperf3 --add /usr/bin/sockperf   # tools from this host
  # this cnperf on an agent image with every tool
  cnperf image build --base ghcr.io/cnperf/cnperf:v0.1.0 --tag registry.local/cnperf:mine`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.runBuild(cmd.Context(), streams)
		},
	}
	o.addBuildFlags(c)
	c.Flags().StringVarP(&o.Output, "output", "o", "cnperf-agent.tar", "the OCI archive to write (for ctr images import, kind load image-archive, skopeo, podman load)")
	c.Flags().StringArrayVar(&o.Loads, "load", nil, "then load the archive: kind:CLUSTER (kind load image-archive), containerd (ctr -n k8s.io images import) or containerd:SOCKET (repeatable)")
	return c
}

func newPushCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{}
	var from string
	c := &cobra.Command{
		Use:   "push REF",
		Short: "Build the agent image and push it to a registry (then use cnperf run --image REF)",
		Example: `  cnperf image push registry.local:5000/cnperf:mine
  cnperf image push --from cnperf-agent.tar registry.local:5000/cnperf:mine`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.runPush(cmd.Context(), streams, args[0], from)
		},
	}
	o.addBuildFlags(c)
	c.Flags().StringVar(&from, "from", "", "push this archive (from cnperf image build) instead of building")
	return c
}

// prepare resolves the binary, the image's name and the version recorded in it.
func (o *Options) prepare(ctx context.Context) (image.BuildOptions, string, error) {
	adds := make([]image.Add, 0, len(o.Adds))
	for _, a := range o.Adds {
		add, err := image.ParseAdd(a)
		if err != nil {
			return image.BuildOptions{}, "", &exit.UsageError{Err: err}
		}
		adds = append(adds, add)
	}
	bo := image.BuildOptions{Base: o.Base, Shell: o.Shell, Adds: adds}
	name := o.Tag
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return bo, "", fmt.Errorf("find this cnperf binary: %w (pass --binary)", err)
		}
		bo.Binary, bo.Version = exe, version.Version
		if name == "" {
			name = version.DefaultImage()
		}
	} else {
		bo.Binary = o.Binary
		img, ver, err := image.BinaryVersion(ctx, o.Binary)
		if err != nil && name == "" {
			return bo, "", &exit.UsageError{Err: fmt.Errorf("--binary %s: cannot ask it which image it deploys (%v): pass --tag", o.Binary, err)}
		}
		bo.Version = ver
		if name == "" {
			name = img
		}
	}
	return bo, name, nil
}

func (o *Options) runBuild(ctx context.Context, streams iostreams.Streams) error {
	bo, name, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	bo.Log = streams.LogWriter()
	img, done, err := image.Build(ctx, bo)
	if err != nil {
		return err
	}
	defer done()
	out, err := filepath.Abs(o.Output)
	if err != nil {
		return err
	}
	if err := image.WriteArchive(img, name, out); err != nil {
		return err
	}
	dig, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "%s: %s (%s)\n", o.Output, name, dig)
	for _, l := range o.Loads {
		if err := image.Load(ctx, out, l, streams.LogWriter()); err != nil {
			return err
		}
		streams.Logger().Info(fmt.Sprintf("image: %s loaded (%s)", name, l))
	}
	return nil
}

func (o *Options) runPush(ctx context.Context, streams iostreams.Streams, ref, from string) error {
	var img v1.Image
	var done func()
	if from != "" {
		var err error
		if img, done, err = image.ReadArchive(from, v1.Platform{OS: "linux", Architecture: runtime.GOARCH}); err != nil {
			return fmt.Errorf("--from %s: %w", from, err)
		}
	} else {
		bo, _, err := o.prepare(ctx)
		if err != nil {
			return err
		}
		bo.Log = streams.LogWriter()
		if img, done, err = image.Build(ctx, bo); err != nil {
			return err
		}
	}
	defer done()
	dig, err := image.Push(ctx, img, ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "%s@%s\n", ref, dig)
	if ref != version.DefaultImage() {
		streams.Logger().Info(fmt.Sprintf("image: pushed; run with: cnperf run --image %s ...", ref))
	}
	return nil
}
