package flame

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"strings"
)

// SVGOptions shape the drawing.
type SVGOptions struct {
	Title string
	// Subtitle says what kind of profile it is (shown under the title).
	Subtitle string
	// Unit names the values ("samples", "ns"); tooltips show value and share.
	Unit string
	// Width in pixels (default 1200).
	Width int
}

const (
	frameHeight = 16
	fontSize    = 12
	charWidth   = 0.59 * fontSize // average glyph width of the sans-serif font
	padX        = 10
	headerH     = 56
	minWidthPx  = 0.3 // narrower frames are not drawn (they would be invisible)
)

// WriteSVG draws the tree as a classic flame graph (root at the bottom, callees above,
// width ∝ value, children sorted by name) in one self-contained SVG document.
func WriteSVG(w io.Writer, root *Node, o SVGOptions) error {
	if root == nil || root.Value <= 0 {
		return fmt.Errorf("flame graph: no samples")
	}
	width := o.Width
	if width <= 0 {
		width = 1200
	}
	unit := o.Unit
	if unit == "" {
		unit = "samples"
	}
	depth := root.Depth()
	height := headerH + depth*frameHeight + 2*padX
	scale := float64(width-2*padX) / float64(root.Value)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">
<style>text{font-family:Verdana,Arial,sans-serif;font-size:%dpx;fill:#000}.t{font-size:17px}.s{fill:#555}rect{stroke:#fff;stroke-width:0.5}g:hover rect{stroke:#000;stroke-width:1}</style>
<rect x="0" y="0" width="%d" height="%d" fill="#f8f8f8" stroke="none"/>
<text class="t" x="%d" y="24" text-anchor="middle">%s</text>
<text class="s" x="%d" y="44" text-anchor="middle">%s</text>
`, width, height, width, height, fontSize, width, height, width/2, esc(o.Title), width/2, esc(o.Subtitle))
	var draw func(n *Node, x float64, level int)
	draw = func(n *Node, x float64, level int) {
		wpx := float64(n.Value) * scale
		if wpx < minWidthPx {
			return
		}
		y := height - padX - (level+1)*frameHeight
		pct := 100 * float64(n.Value) / float64(root.Value)
		fmt.Fprintf(bw, `<g><title>%s (%d %s, %.2f%%)</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"/>`,
			esc(n.Name), n.Value, esc(unit), pct, float64(padX)+x, y, wpx, frameHeight-1, color(n.Name, level == 0))
		if label := fit(n.Name, wpx); label != "" {
			fmt.Fprintf(bw, `<text x="%.2f" y="%d">%s</text>`, float64(padX)+x+3, y+fontSize, esc(label))
		}
		_, _ = bw.WriteString("</g>\n") // a write error stays in bw; Flush returns it
		cx := x
		for _, c := range n.Children {
			draw(c, cx, level+1)
			cx += float64(c.Value) * scale
		}
	}
	draw(root, 0, 0)
	_, _ = bw.WriteString("</svg>\n")
	return bw.Flush() // the first error of any write above
}

// fit shortens a label to the frame's width ("" when not even 3 characters fit).
func fit(name string, wpx float64) string {
	room := int((wpx - 6) / charWidth)
	if room < 3 {
		return ""
	}
	r := []rune(name)
	if len(r) <= room {
		return name
	}
	return string(r[:room-2]) + ".."
}

// color picks a warm colour from the name (stable across runs); kernel frames are orange,
// the root grey.
func color(name string, root bool) string {
	if root {
		return "rgb(200,200,200)"
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	a, b := int(v%55), int((v>>8)%80)
	if strings.HasSuffix(name, KernelSuffix) {
		return fmt.Sprintf("rgb(%d,%d,%d)", 220+a%35, 120+b, 40)
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", 200+a, 60+b+a/2, 55)
}

func esc(s string) string { return html.EscapeString(s) }
