package stats

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/cnperf/cnperf/internal/fieldname"
)

// mayBeNegative are the figures that can be negative: a sample's index (-1 for a warm-up),
// the low end of a confidence interval of a mean close to zero, a first interval slower than
// the rest of its sample, and a falling trend's rank correlation.
var mayBeNegative = map[string]bool{"index": true, "ci95Low": true, "firstIntervalPercent": true, "spearmanRho": true}

// CheckFigures walks v (a value of the result types: a Sample, Summary, Params...) and refuses
// a negative or non-finite number, and a figure beyond physical sense (see Limits), naming it
// by its JSON path under path: no measurement produces one. The readers of results files
// refuse such files, the runner fails a sample whose tool printed one, `cnperf import` refuses
// the file; the drivers' fuzz tests check that no parser produces one.
func CheckFigures(v any, path string) error { return checkFigures(reflect.ValueOf(v), path, true) }

// CheckFinite is CheckFigures without the physical limits: only negative and non-finite
// numbers are refused. It is the parsers' contract (their fuzz tests feed them any number a
// tool could print; whether it is believable is the runner's and the readers' judgement).
func CheckFinite(v any, path string) error { return checkFigures(reflect.ValueOf(v), path, false) }

// Limit is the largest value of a kind of figure that a measurement can produce: what is
// beyond it is a corrupt file or a tool printing garbage (and would overflow the statistics).
type Limit struct {
	Max  float64
	What string // the limit for people, e.g. "10 Tbit/s"
}

// Limits by unit, generous: ten times today's fastest links, a day of latency.
var (
	LimitBitsPerSecond    = Limit{1e13, "10 Tbit/s"}
	LimitPacketsPerSecond = Limit{2e10, "20 G packets/s"}
	LimitOpsPerSecond     = Limit{1e10, "10 G per second"}
	LimitMicroseconds     = Limit{86400e6, "one day"}
	LimitLossPercent      = Limit{100, "100 %"}
	LimitCPUPercent       = Limit{1e6, "10000 cores"}
	LimitRetransmits      = Limit{1e15, "10^15"}
	LimitSeconds          = Limit{1e8, "about 3 years"}
)

// notAFigure are the fields that are derived from figures without their unit's bound
// (a spread, a ratio, an interval that may reach past the data) or carry no unit.
var notAFigure = map[string]bool{"stddev": true, "cov": true, "ci95Low": true, "ci95High": true,
	"firstIntervalPercent": true, "noisePercent": true, "halfWidthPercent": true, "finalHalfWidthPercent": true,
	"level": true, "spearmanRho": true, "pValue": true, "sumNanoseconds": true}

// limitOf is the Limit of the float at path: the unit of its nearest named ancestor (or its
// own name), e.g. summary.throughputBitsPerSecond.mean is a rate in bit/s.
func limitOf(path string) (Limit, bool) {
	segs := strings.Split(path, ".")
	if notAFigure[lastField(path)] {
		return Limit{}, false
	}
	for i := len(segs) - 1; i >= 0; i-- {
		name := lastField(segs[i])
		switch {
		case strings.HasSuffix(name, "BitsPerSecond") || name == "bitsPerSecond":
			return LimitBitsPerSecond, true
		case name == "packetsPerSecond":
			return LimitPacketsPerSecond, true
		case name == "transactionsPerSecond" || name == "connectionsPerSecond":
			return LimitOpsPerSecond, true
		case strings.HasSuffix(name, "Microseconds") || name == "latency":
			return LimitMicroseconds, true
		case name == "lossPercent":
			return LimitLossPercent, true
		case name == "cpu" || name == "cpuPercent" || strings.HasPrefix(name, "cpu") && strings.HasSuffix(name, "Percent"):
			return LimitCPUPercent, true
		case name == "retransmits":
			return LimitRetransmits, true
		case strings.HasSuffix(name, "Seconds") && !strings.Contains(name, "PerSecond"):
			return LimitSeconds, true
		}
	}
	return Limit{}, false
}

func checkFigures(v reflect.Value, path string, limits bool) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkFigures(v.Elem(), path, limits)
	case reflect.Struct:
		if v.Type().PkgPath() == "time" {
			return nil
		}
		t := v.Type()
		for _, f := range fieldname.Of(t, "json") {
			if err := checkFigures(v.Field(f.Index), path+"."+f.Name, limits); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := checkFigures(v.Index(i), fmt.Sprintf("%s[%d]", path, i), limits); err != nil {
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
		if l, ok := limitOf(path); limits && ok && x > l.Max {
			return fmt.Errorf("%s is %v: beyond physical sense (more than %s)", path, x, l.What)
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
