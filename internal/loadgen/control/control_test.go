package control

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var genCorpus = flag.Bool("gen-corpus", false, "rewrite testdata/fuzz/FuzzDecode seed files")

func validSetup() *Setup {
	return &Setup{Profile: "TCP_RR", DurationNs: 1e9, WarmupNs: 0, MessageBytes: 1, ResponseBytes: 1,
		Parallel: 1, Burst: 0, ServerCPU: -1}
}

func sampleMessages() []*Message {
	return []*Message{
		{Type: TypeHello, Hello: &Hello{Version: Version, Software: "cnperf test"}},
		{Type: TypeSetup, Setup: validSetup()},
		{Type: TypeSetup, Setup: &Setup{Profile: "UDP_STREAM", DurationNs: 2e9, WarmupNs: 5e8, MessageBytes: 1400,
			Parallel: 4, RateBitsPerSecond: 1e9, SendBufferBytes: 1 << 20, RecvBufferBytes: 1 << 20, ServerCPU: 1, NoOffload: true}},
		{Type: TypeSetup, Setup: &Setup{Profile: "TCP_CRR", DurationNs: 1e9, MessageBytes: 1, Parallel: 8, CRRClose: CloseRST, ServerCPU: -1}},
		{Type: TypeReady, Ready: &Ready{DataPort: 7101, Cookie: strings.Repeat("ab", 16), Offload: "udp-gro"}},
		{Type: TypeStart}, {Type: TypeStarted}, {Type: TypeMeasure}, {Type: TypeStop},
		{Type: TypeFinish, Finish: &Finish{LastSeq: []uint64{10, 0, 12345678901}}},
		{Type: TypeResult, Result: &ServerResult{WindowNs: 1e9, CPU: &CPU{WindowNs: 1e9, UserNs: 10, SystemNs: 20, HostBusy: 3, HostTotal: 200, NumCPU: 2},
			Flows: []FlowCounters{{Flow: 0, WindowBytesRx: 100, TotalBytesRx: 200, PacketsRx: 5, HighestSeq: 6, Lost: 1, JitterNs: 1234.5}},
			Notes: []string{"udp-gro"}}},
		{Type: TypeError, Error: "server busy"},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			t.Fatalf("%s: %v", m.Type, err)
		}
		got, err := Decode(&buf)
		if err != nil {
			t.Fatalf("%s: %v", m.Type, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("%s: round trip\n got %+v\nwant %+v", m.Type, got, m)
		}
		if buf.Len() != 0 {
			t.Fatalf("%s: %d bytes left", m.Type, buf.Len())
		}
	}
}

func frame(body string) []byte {
	b := make([]byte, 8+len(body))
	copy(b, Magic)
	binary.BigEndian.PutUint32(b[4:], uint32(len(body)))
	copy(b[8:], body)
	return b
}

func TestDecodeRejects(t *testing.T) {
	big := make([]byte, 8)
	copy(big, Magic)
	binary.BigEndian.PutUint32(big[4:], MaxFrameBytes+1)
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"bad magic", append([]byte("HTTP"), frame(`{}`)[4:]...), "bad magic"},
		{"oversized", big, "outside"},
		{"zero length", frame(""), "outside"},
		{"truncated header", []byte("CNP"), "frame header"},
		{"truncated body", frame(`{"type":"start"}`)[:12], "frame body"},
		{"not json", frame(`hello`), "bad message"},
		{"array", frame(`[1,2]`), "bad message"},
		{"trailing", frame(`{"type":"start"}{"type":"stop"}`), "after the JSON"},
		{"trailing junk", frame(`{"type":"start"} x`), "after the JSON"},
		{"unknown field", frame(`{"type":"start","evil":1}`), "unknown field"},
		{"unknown type", frame(`{"type":"reboot"}`), "unknown message type"},
		{"missing payload", frame(`{"type":"setup"}`), "missing setup"},
		{"wrong payload", frame(`{"type":"start","hello":{"version":1}}`), "unexpected hello"},
		{"two payloads", frame(`{"type":"hello","hello":{"version":1},"error":"x"}`), "unexpected error"},
		{"version", frame(`{"type":"hello","hello":{"version":0}}`), "version"},
		{"profile", frame(`{"type":"setup","setup":{"profile":"TCP_FOO","durationNs":1,"warmupNs":0,"messageBytes":1,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":-1}}`), "unknown profile"},
		{"duration", frame(`{"type":"setup","setup":{"profile":"TCP_RR","durationNs":0,"warmupNs":0,"messageBytes":1,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":-1}}`), "durationNs"},
		{"parallel", frame(`{"type":"setup","setup":{"profile":"TCP_RR","durationNs":1,"warmupNs":0,"messageBytes":1,"responseBytes":0,"parallel":100000,"burst":0,"serverCPU":-1}}`), "parallel"},
		{"udp size", frame(`{"type":"setup","setup":{"profile":"UDP_STREAM","durationNs":1,"warmupNs":0,"messageBytes":70000,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":-1}}`), "messageBytes"},
		{"udp too small", frame(`{"type":"setup","setup":{"profile":"UDP_STREAM","durationNs":1,"warmupNs":0,"messageBytes":8,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":-1}}`), "messageBytes"},
		{"negative burst", frame(`{"type":"setup","setup":{"profile":"TCP_RR","durationNs":1,"warmupNs":0,"messageBytes":1,"responseBytes":0,"parallel":1,"burst":-1,"serverCPU":-1}}`), "burst"},
		{"int overflow", frame(`{"type":"setup","setup":{"profile":"TCP_RR","durationNs":1e30}}`), "bad message"},
		{"close mode", frame(`{"type":"setup","setup":{"profile":"TCP_CRR","durationNs":1,"warmupNs":0,"messageBytes":1,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":-1,"crrClose":"slam"}}`), "crrClose"},
		{"cpu", frame(`{"type":"setup","setup":{"profile":"TCP_RR","durationNs":1,"warmupNs":0,"messageBytes":1,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":99999}}`), "serverCPU"},
		{"cookie", frame(`{"type":"ready","ready":{"dataPort":1,"cookie":"../../etc/passwd"}}`), "cookie"},
		{"port", frame(`{"type":"ready","ready":{"dataPort":70000,"cookie":"00000000000000000000000000000000"}}`), "dataPort"},
		{"flow order", frame(`{"type":"result","result":{"windowNs":1,"flows":[{"flow":1}]}}`), "index"},
		{"no flows", frame(`{"type":"result","result":{"windowNs":1,"flows":[]}}`), "flows"},
		{"negative counter", frame(`{"type":"result","result":{"windowNs":1,"flows":[{"flow":0,"windowBytesRx":-5}]}}`), "negative"},
		{"long error", frame(`{"type":"error","error":"` + strings.Repeat("x", MaxErrorBytes+1) + `"}`), "limit"},
		{"too many seqs", frame(`{"type":"finish","finish":{"lastSeq":[` + strings.TrimSuffix(strings.Repeat("1,", MaxParallel+1), ",") + `]}}`), "lastSeq"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := Decode(bytes.NewReader(nil)); err == nil || err.Error() != "EOF" {
		t.Fatalf("empty stream: %v, want io.EOF", err)
	}
}

func TestEncodeRefusesInvalid(t *testing.T) {
	if err := Encode(&bytes.Buffer{}, &Message{Type: TypeSetup}); err == nil {
		t.Fatal("invalid message encoded")
	}
}

// FuzzDecode feeds arbitrary bytes to the decoder: it must return an error or a message that
// validates and survives a re-encode/decode round trip; it must never panic or hang.
func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded message does not validate: %v", err)
		}
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, err := Decode(&buf)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip differs: %+v vs %+v", m, m2)
		}
	})
}

// TestGenCorpus rewrites the checked-in seed corpus (go test -run GenCorpus -gen-corpus).
func TestGenCorpus(t *testing.T) {
	if !*genCorpus {
		t.Skip("use -gen-corpus to rewrite testdata/fuzz/FuzzDecode")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range sampleMessages() {
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		write(fmt.Sprintf("valid-%02d-%s", i, m.Type), buf.Bytes())
	}
	write("hostile-huge-length", []byte("CNPF\xff\xff\xff\xff{}"))
	write("hostile-deep-nesting", frame(`{"type":"result","result":`+strings.Repeat("[", 5000)+`}`))
	write("hostile-unknown-field", frame(`{"type":"start","x":{"y":[1,2,3]}}`))
	write("hostile-trailing", frame(`{"type":"stop"}{"type":"stop"}`))
	write("hostile-bad-magic", []byte("GET / HTTP/1.1\r\n\r\n"))
	write("hostile-nan", frame(`{"type":"setup","setup":{"profile":"UDP_STREAM","durationNs":1,"warmupNs":0,"messageBytes":100,"responseBytes":0,"parallel":1,"burst":0,"serverCPU":-1,"rateBitsPerSecond":1e400}}`))
}
