package stats

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// mayBeNegative are the figures that can be negative: a sample's index (-1 for a warm-up),
// the low end of a confidence interval of a mean close to zero, a first interval slower than
// the rest of its sample, and a falling trend's rank correlation.
var mayBeNegative = map[string]bool{"index": true, "ci95Low": true, "firstIntervalPercent": true, "spearmanRho": true}

// CheckFigures walks v (a value of the result types: a Sample, Summary, Params...) and refuses
// a negative or non-finite number, naming it by its JSON path under path: no measurement
// produces one. The readers of results files refuse such files; the drivers' fuzz tests
// check that no parser produces one.
func CheckFigures(v any, path string) error { return checkFigures(reflect.ValueOf(v), path) }

func checkFigures(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkFigures(v.Elem(), path)
	case reflect.Struct:
		if v.Type().PkgPath() == "time" {
			return nil
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if err := checkFigures(v.Field(i), path+"."+name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := checkFigures(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Float32, reflect.Float64:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s is %v: a figure must be a finite number", path, x)
		}
		if x < 0 && !mayBeNegative[lastField(path)] {
			return fmt.Errorf("%s is %v: this figure is never negative", path, x)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() < 0 && !mayBeNegative[lastField(path)] {
			return fmt.Errorf("%s is %d: this figure is never negative", path, v.Int())
		}
	}
	return nil
}

func lastField(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		path = path[:i]
	}
	return path
}
