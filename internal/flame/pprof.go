package flame

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Profile is a decoded pprof profile reduced to what a flame graph needs.
type Profile struct {
	// SampleType and Unit name the value the stacks carry (e.g. "cpu", "nanoseconds").
	SampleType, Unit string
	Stacks           []Stack
	// Samples is the number of stack samples (the first value of a CPU profile).
	Samples int64
	// DurationNanos is how long the profile ran.
	DurationNanos int64
}

// pprof's profile.proto field numbers (github.com/google/pprof/proto/profile.proto).
const (
	fProfileSampleType    = 1
	fProfileSample        = 2
	fProfileLocation      = 4
	fProfileFunction      = 5
	fProfileStringTable   = 6
	fProfileDurationNanos = 10
	fProfileDefaultType   = 14

	fValueTypeType = 1
	fValueTypeUnit = 2

	fSampleLocationID = 1
	fSampleValue      = 2

	fLocationID   = 1
	fLocationLine = 4

	fLineFunctionID = 1

	fFunctionID   = 1
	fFunctionName = 2
)

type rawSample struct {
	locs   []uint64
	values []int64
}

// ParsePprof decodes a pprof profile (gzip-compressed or not), as written by
// runtime/pprof, into root-first stacks of function names (inlined frames included). The
// stack value is the profile's default sample type, or its last one (CPU time in
// nanoseconds for a Go CPU profile).
func ParsePprof(r io.Reader) (*Profile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("pprof: read: %w", err)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("pprof: gzip: %w", err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("pprof: gunzip: %w", err)
		}
	}
	if len(data) == 0 {
		return nil, errors.New("pprof: empty profile")
	}
	raw := &rawProfile{locations: map[uint64][]uint64{}, functions: map[uint64]int64{}}
	if err := eachField(data, raw.field); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	return raw.profile()
}

// rawProfile is a pprof profile's messages as decoded, before the stacks are resolved.
type rawProfile struct {
	types     [][2]int64 // sample types: type and unit string indexes
	samples   []rawSample
	locations map[uint64][]uint64 // location id → function ids, innermost first
	functions map[uint64]int64    // function id → name string index
	strs      []string
	defType   int64
	duration  int64
}

// field decodes one field of the Profile message.
func (p *rawProfile) field(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
	switch num {
	case fProfileSampleType:
		var vt [2]int64
		if err := eachField(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
			switch n {
			case fValueTypeType:
				vt[0] = int64(x)
			case fValueTypeUnit:
				vt[1] = int64(x)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("sample_type: %w", err)
		}
		p.types = append(p.types, vt)
	case fProfileSample:
		var s rawSample
		if err := eachField(v, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
			switch n {
			case fSampleLocationID:
				return appendVarints(t, b, x, func(u uint64) { s.locs = append(s.locs, u) })
			case fSampleValue:
				return appendVarints(t, b, x, func(u uint64) { s.values = append(s.values, int64(u)) })
			}
			return nil
		}); err != nil {
			return fmt.Errorf("sample: %w", err)
		}
		p.samples = append(p.samples, s)
	case fProfileLocation:
		return p.location(v)
	case fProfileFunction:
		return p.function(v)
	case fProfileStringTable:
		p.strs = append(p.strs, string(v))
	case fProfileDurationNanos:
		p.duration = int64(x)
	case fProfileDefaultType:
		p.defType = int64(x)
	}
	return nil
}

// location decodes a Location message: its id and the functions of its lines.
func (p *rawProfile) location(v []byte) error {
	var id uint64
	var funcs []uint64
	if err := eachField(v, func(n protowire.Number, _ protowire.Type, b []byte, x uint64) error {
		switch n {
		case fLocationID:
			id = x
		case fLocationLine:
			return eachField(b, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
				if n == fLineFunctionID {
					funcs = append(funcs, x)
				}
				return nil
			})
		}
		return nil
	}); err != nil {
		return fmt.Errorf("location: %w", err)
	}
	p.locations[id] = funcs
	return nil
}

// function decodes a Function message: its id and name.
func (p *rawProfile) function(v []byte) error {
	var id uint64
	var name int64
	if err := eachField(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
		switch n {
		case fFunctionID:
			id = x
		case fFunctionName:
			name = int64(x)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("function: %w", err)
	}
	p.functions[id] = name
	return nil
}

func (p *rawProfile) str(i int64) string {
	if i >= 0 && int(i) < len(p.strs) {
		return p.strs[i]
	}
	return ""
}

// profile resolves the samples into root-first stacks of the default (or last) sample type.
func (p *rawProfile) profile() (*Profile, error) {
	if len(p.types) == 0 {
		return nil, errors.New("pprof: no sample types (not a pprof profile?)")
	}
	vi := len(p.types) - 1
	if p.defType != 0 {
		for i, t := range p.types {
			if t[0] == p.defType {
				vi = i
			}
		}
	}
	out := &Profile{DurationNanos: p.duration, SampleType: p.str(p.types[vi][0]), Unit: p.str(p.types[vi][1])}
	for _, s := range p.samples {
		if vi >= len(s.values) {
			return nil, fmt.Errorf("pprof: a sample has %d values, the profile declares %d types", len(s.values), len(p.types))
		}
		if len(s.values) > 0 {
			out.Samples += s.values[0]
		}
		frames, err := p.frames(s)
		if err != nil {
			return nil, err
		}
		out.Stacks = append(out.Stacks, Stack{Frames: frames, Value: s.values[vi]})
	}
	return out, nil
}

// frames are a sample's function names, root first (inlined frames included).
func (p *rawProfile) frames(s rawSample) ([]string, error) {
	var frames []string // innermost first
	for _, l := range s.locs {
		funcs, ok := p.locations[l]
		if !ok {
			return nil, fmt.Errorf("pprof: a sample names location %d, which is not defined", l)
		}
		if len(funcs) == 0 {
			frames = append(frames, fmt.Sprintf("0x%x", l))
		}
		for _, f := range funcs {
			name := p.str(p.functions[f])
			if name == "" {
				name = fmt.Sprintf("func#%d", f)
			}
			frames = append(frames, name)
		}
	}
	slices.Reverse(frames)
	return frames, nil
}

// eachField calls fn for every field of a protobuf message: v holds the bytes of a
// length-delimited field, x the value of a varint or fixed field.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// appendVarints handles a repeated integer field, packed or not.
func appendVarints(typ protowire.Type, b []byte, x uint64, add func(uint64)) error {
	if typ == protowire.VarintType {
		add(x)
		return nil
	}
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		add(v)
		b = b[n:]
	}
	return nil
}
