// Package fieldname names the exported fields of a struct type the way an encoding does: by the
// name in their tag (json, yaml), else by the Go name; a field tagged "-" is left out. The
// config decoder and the figure checks of stats walk structs by these names.
package fieldname

import (
	"reflect"
	"strings"
)

// Field is one exported field of a struct type as an encoding sees it.
type Field struct {
	Name  string // the name in the tag, else the Go field name
	Index int    // for reflect's Field(i)
}

// Of lists the exported fields of struct type t in order, named by tag key ("json", "yaml").
// Embedded structs are fields like any other (not flattened).
func Of(t reflect.Type, key string) []Field {
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get(key), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, Field{Name: name, Index: i})
	}
	return out
}
