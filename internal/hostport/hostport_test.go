package hostport

import (
	"net"
	"reflect"
	"strconv"
	"testing"
)

func TestSpans(t *testing.T) {
	cases := []struct {
		lo, hi, n int
		want      [][2]int
	}{
		{32768, 60999, 1, [][2]int{{10000, 32767}, {61000, 65535}}},
		{32768, 60999, 4, [][2]int{{10000, 32764}, {61000, 65532}}},
		{1024, 65535, 1, nil},
		{10003, 65000, 3, [][2]int{{10000, 10000}, {65001, 65533}}},
		{10002, 65000, 3, [][2]int{{65001, 65533}}},
		{5000, 9000, 2, [][2]int{{10000, 65534}}},
	}
	for _, c := range cases {
		if got := spans(c.lo, c.hi, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("spans(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

// A block is free when returned, outside the ephemeral range, and a block with a taken port
// is not reported free.
func TestBlock(t *testing.T) {
	lo, hi := ephemeral()
	for i := 0; i < 20; i++ {
		base, err := Block(3)
		if err != nil {
			t.Fatal(err)
		}
		if base < lowest || base+2 > 65535 || (base+2 >= lo && base <= hi) {
			t.Fatalf("block %d-%d overlaps the ephemeral range %d-%d or is out of bounds", base, base+2, lo, hi)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+1))
		if err != nil {
			t.Fatalf("port %d of the block: %v", base+1, err)
		}
		if free(base, 3) {
			t.Errorf("block %d-%d is reported free while %d listens on loopback", base, base+2, base+1)
		}
		l.Close()
	}
	if _, err := Block(0); err == nil {
		t.Error("Block(0): no error")
	}
}
