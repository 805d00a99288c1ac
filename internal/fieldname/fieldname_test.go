package fieldname

import (
	"reflect"
	"slices"
	"testing"
)

type sample struct {
	Plain   int
	Tagged  int `json:"tagged,omitempty" yaml:"yamlName"`
	Skipped int `json:"-" yaml:"-"`
	hidden  int
	Options int `json:",omitempty"`
	Last    int `yaml:"last,flow"`
}

func TestOf(t *testing.T) {
	_ = sample{}.hidden
	for _, tc := range []struct {
		key  string
		want []Field
	}{
		{"json", []Field{{"Plain", 0}, {"tagged", 1}, {"Options", 4}, {"Last", 5}}},
		{"yaml", []Field{{"Plain", 0}, {"yamlName", 1}, {"Options", 4}, {"last", 5}}},
	} {
		if got := Of(reflect.TypeFor[sample](), tc.key); !slices.Equal(got, tc.want) {
			t.Errorf("Of(sample, %q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
