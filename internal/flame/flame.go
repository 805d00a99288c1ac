// Package flame turns CPU profiles into self-contained flame graph SVGs: from a Go pprof
// CPU profile (the cnperf agent's own, user-space stacks of that one process) and from
// `perf script` output or folded stacks (perf record -a -g on a node: kernel and user stacks
// of everything that ran). The SVG has no script and no external reference; every frame has
// a tooltip with its samples and share.
package flame

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
)

// Stack is one call stack, root first, with its weight (samples, or nanoseconds).
type Stack struct {
	Frames []string
	Value  int64
}

// Node is a frame in the merged call tree.
type Node struct {
	Name     string
	Value    int64 // this frame and everything it called
	Children []*Node
	index    map[string]*Node
}

// Build merges stacks into a call tree under a root named root. Children are sorted by
// name, as flame graphs are (the x axis is not time).
func Build(root string, stacks []Stack) *Node {
	r := &Node{Name: root}
	for _, s := range stacks {
		if s.Value <= 0 {
			continue
		}
		n := r
		n.Value += s.Value
		for _, f := range s.Frames {
			if n.index == nil {
				n.index = map[string]*Node{}
			}
			c, ok := n.index[f]
			if !ok {
				c = &Node{Name: f}
				n.index[f] = c
				n.Children = append(n.Children, c)
			}
			c.Value += s.Value
			n = c
		}
	}
	sortTree(r)
	return r
}

func sortTree(n *Node) {
	sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].Name < n.Children[j].Name })
	for _, c := range n.Children {
		sortTree(c)
	}
}

// Depth is the tree's height (the root alone is 1).
func (n *Node) Depth() int {
	d := 0
	for _, c := range n.Children {
		d = max(d, c.Depth())
	}
	return d + 1
}

// Find returns the total value of the frames named name (anywhere in the tree, counted once
// per stack path: nested recursion is not double counted).
func (n *Node) Find(name string) int64 {
	var walk func(*Node) int64
	walk = func(x *Node) int64 {
		if x.Name == name {
			return x.Value
		}
		var t int64
		for _, c := range x.Children {
			t += walk(c)
		}
		return t
	}
	return walk(n)
}

// Folded writes the tree's stacks in folded form ("a;b;c 12", one line per leaf path,
// sorted), the input format of Brendan Gregg's flamegraph.pl.
func Folded(stacks []Stack) string {
	agg := map[string]int64{}
	for _, s := range stacks {
		if s.Value > 0 && len(s.Frames) > 0 {
			agg[strings.Join(s.Frames, ";")] += s.Value
		}
	}
	keys := make([]string, 0, len(agg))
	for k := range agg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, agg[k])
	}
	return b.String()
}

// ProfileCPU starts a Go CPU profile of this process into path; stop ends it and closes
// the file. It is what `cnperf agent client|serve --cpu-profile FILE` runs.
func ProfileCPU(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile %s: %w", path, err)
		}
		return nil
	}, nil
}
