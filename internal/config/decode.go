package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cnperf/cnperf/internal/fieldname"
	"github.com/cnperf/cnperf/internal/plan"
)

// maxErrors bounds the problems reported for one file.
const maxErrors = 100

// maxNodes bounds the work of one decode, so that a small file full of aliases (a "billion
// laughs") cannot make cnperf expand it without end.
const maxNodes = 200000

// decoder decodes a yaml.Node tree into Go values strictly: unknown fields, duplicate keys and
// wrong types are reported with their line, their field path and, for unknown fields, the
// nearest known name. Every problem is collected; decoding goes on after one.
type decoder struct {
	// fold matches keys case-insensitively (tiger-bench reads its file through encoding/json).
	fold bool
	// lenient lists struct types whose unknown keys are warnings, not errors.
	lenient map[reflect.Type]bool
	// peer names the tool whose format is read, for the warning about an ignored key
	// ("k8s-netperf ignores it"); "" says only "ignored".
	peer string
	// lines records, for every field path decoded, where it is in the file.
	lines LineIndex
	errs  []FileError
	warns []FileError
	nodes int
	over  bool
	// pairCache holds each mapping's entries once merged, so shared anchors cost once.
	pairCache map[*yaml.Node][]pair
}

func newDecoder() *decoder { return &decoder{lines: LineIndex{}} }

// decodeInto decodes n into *out.
func (d *decoder) decodeInto(n *yaml.Node, out any, path string) {
	d.decode(n, reflect.ValueOf(out).Elem(), path)
}

func (d *decoder) errorf(n *yaml.Node, path, format string, a ...any) {
	if len(d.errs) >= maxErrors {
		if !d.over {
			d.over = true
			d.errs = append(d.errs, FileError{Line: n.Line, Column: n.Column, Message: "too many problems; stopped here"})
		}
		return
	}
	d.errs = append(d.errs, FileError{Line: n.Line, Column: n.Column, Field: path, Message: fmt.Sprintf(format, a...)})
}

func (d *decoder) warnf(n *yaml.Node, path, format string, a ...any) {
	d.warns = append(d.warns, FileError{Line: n.Line, Column: n.Column, Field: path, Message: fmt.Sprintf(format, a...)})
}

func (d *decoder) mark(path string, n *yaml.Node) {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = Pos{Line: n.Line, Column: n.Column, Field: path}
	}
}

// resolve follows aliases and counts the work.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	d.nodes++
	if d.nodes > maxNodes && !d.over {
		d.over = true
		d.errorf(n, "", "document too large or too many aliases (more than %d nodes)", maxNodes)
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe renders a node for a message: a quoted scalar, "a list" or "a mapping".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	}
	return "nothing"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// pair is one key/value of a mapping, after merge keys are applied.
type pair struct{ key, val *yaml.Node }

// pairs lists a mapping's entries in file order; merged entries ("<<: *anchor") come first and
// are overridden by explicit keys, and earlier merged mappings win over later ones, as YAML
// merge keys specify.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	if ps, ok := d.pairCache[n]; ok {
		return ps
	}
	ps := d.pairsOf(n, path)
	if d.pairCache == nil {
		d.pairCache = map[*yaml.Node][]pair{}
	}
	d.pairCache[n] = ps
	return ps
}

func (d *decoder) pairsOf(n *yaml.Node, path string) []pair {
	var merged, own []pair
	mergedKeys := map[string]bool{}
	addMerged := func(ps []pair) {
		for _, p := range ps {
			if !mergedKeys[p.key.Value] {
				mergedKeys[p.key.Value] = true
				merged = append(merged, p)
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			v = d.resolve(v)
			if d.over {
				return nil
			}
			switch v.Kind {
			case yaml.MappingNode:
				addMerged(d.pairs(v, path))
			case yaml.SequenceNode:
				for _, m := range v.Content {
					if m = d.resolve(m); d.over {
						return nil
					}
					if m.Kind == yaml.MappingNode {
						addMerged(d.pairs(m, path))
					} else {
						d.errorf(m, path, "a merge key (<<) takes mappings, got %s", describe(m))
					}
				}
			default:
				d.errorf(v, path, "a merge key (<<) takes a mapping, got %s", describe(v))
			}
			continue
		}
		own = append(own, pair{k, v})
	}
	if len(merged) == 0 {
		return own
	}
	ownKeys := map[string]bool{}
	for _, o := range own {
		ownKeys[o.key.Value] = true
	}
	out := make([]pair, 0, len(merged)+len(own))
	for _, m := range merged {
		if !ownKeys[m.key.Value] {
			out = append(out, m)
		}
	}
	return append(out, own...)
}

// decode stores n into v (settable), at field path path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = d.resolve(n)
	if d.over {
		return
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		d.decode(n.Content[0], v, path)
		return
	}
	if isNull(n) {
		v.Set(reflect.Zero(v.Type()))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			hint := ""
			if n.Kind == yaml.ScalarNode {
				hint = fmt.Sprintf(" (write [%s])", n.Value)
			}
			d.errorf(n, path, "expected a list, got %s%s", describe(n), hint)
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			ep := fmt.Sprintf("%s[%d]", path, i)
			d.mark(ep, d.resolve(e))
			d.decode(e, s.Index(i), ep)
		}
		v.Set(s)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, path, "expected a string, got %s", describe(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			d.errorf(n, path, "expected an integer, got %s", describe(n))
			return
		}
		var i int64
		if err := n.Decode(&i); err != nil || v.OverflowInt(i) {
			d.errorf(n, path, "integer %s is out of range", n.Value)
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		tag := n.ShortTag()
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") {
			d.errorf(n, path, "expected a number, got %s", describe(n))
			return
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			d.errorf(n, path, "expected a number, got %s", describe(n))
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		if n.Kind == yaml.ScalarNode {
			if n.ShortTag() == "!!bool" {
				var b bool
				if err := n.Decode(&b); err == nil {
					v.SetBool(b)
					return
				}
			}
			// YAML 1.1 booleans, which yaml.v3 and sigs.k8s.io/yaml accept for bool fields.
			switch n.Value {
			case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
				v.SetBool(true)
				return
			case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
				v.SetBool(false)
				return
			}
		}
		d.errorf(n, path, "expected true or false, got %s", describe(n))
	default:
		d.errorf(n, path, "cannot decode into %s", v.Type())
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping of fields, got %s", describe(n))
		return
	}
	fields := fieldname.Of(v.Type(), "yaml")
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	seen := map[string]*yaml.Node{}
	d.eachKey(n, path, "a field name", func(k, val *yaml.Node) {
		key := k.Value
		fp := join(path, key)
		var f *fieldname.Field
		for i := range fields {
			if fields[i].Name == key || (d.fold && strings.EqualFold(fields[i].Name, key)) {
				f = &fields[i]
				break
			}
		}
		if f == nil {
			msg := fmt.Sprintf("unknown field %q", key)
			if s := plan.Closest(key, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += fmt.Sprintf(" (known: %s)", strings.Join(names, ", "))
			}
			if d.lenient[v.Type()] {
				if d.peer != "" {
					d.warnf(k, fp, "%s; %s ignores it, and so does cnperf", msg, d.peer)
				} else {
					d.warnf(k, fp, "%s; ignored", msg)
				}
			} else {
				d.errorf(k, fp, "%s", msg)
			}
			return
		}
		if prev, dup := seen[f.Name]; dup {
			d.errorf(k, fp, "duplicate field %q (already set at line %d)", key, prev.Line)
			return
		}
		seen[f.Name] = k
		d.mark(fp, k)
		d.decode(val, v.Field(f.Index), fp)
	})
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping, got %s", describe(n))
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		d.errorf(n, path, "cannot decode into %s", v.Type())
		return
	}
	m := reflect.MakeMap(v.Type())
	seen := map[string]int{}
	if !d.eachKey(n, path, "a key", func(k, val *yaml.Node) {
		fp := join(path, k.Value)
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, fp, "duplicate key %q (already set at line %d)", k.Value, line)
			return
		}
		seen[k.Value] = k.Line
		d.mark(fp, k)
		ev := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, ev, fp)
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), ev)
	}) {
		return
	}
	v.Set(m)
}

// eachKey calls fn with each pair of mapping n whose key resolves to a scalar; a key that is no
// scalar is an error ("expected " + want). It returns false when decoding hit its limits and
// must stop.
func (d *decoder) eachKey(n *yaml.Node, path, want string, fn func(k, val *yaml.Node)) bool {
	for _, p := range d.pairs(n, path) {
		k := d.resolve(p.key)
		if d.over {
			return false
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "expected %s, got %s", want, describe(k))
			continue
		}
		fn(k, p.val)
	}
	return true
}
