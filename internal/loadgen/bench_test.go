package loadgen

import (
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// BenchmarkRRSocketpair runs the TCP_RR client and server loops over a Unix socketpair: one
// op is one 1-byte transaction. It measures the loops' own cost (system calls, clock reads,
// histogram) without a network stack; "nohist" is the same with the histogram off.
func BenchmarkRRSocketpair(b *testing.B) {
	for _, tc := range []struct {
		name  string
		hist  bool
		burst int
	}{{"hist", true, 0}, {"nohist", false, 0}, {"hist-burst16", true, 16}} {
		b.Run(tc.name, func(b *testing.B) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(fds[0])
			defer unix.Close(fds[1])
			// no socket timeouts, and a P for each side, as in real TCP_RR sessions (under
			// `taskset -c 0` GOMAXPROCS would start at 1: both loops would then share one P)
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			ensureProcs(2)
			cli := &flowState{fd: fds[0]}
			if tc.hist {
				cli.hist = hdr.New()
			}
			srv := &flowState{fd: fds[1]}
			var phase atomic.Int32
			phase.Store(phaseMeasure)
			n := int64(b.N)
			done := make(chan error, 1)
			go func() {
				done <- tcpRRServer(srv, 1, 1, func() bool { return false })
			}()
			b.ResetTimer()
			if err := tcpRRClient(cli, 1, 1, tc.burst, &phase, func() bool { return cli.c.tx.Load() >= n }); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			if got := srv.c.tx.Load(); got != cli.c.tx.Load() {
				b.Fatalf("server answered %d, client completed %d", got, cli.c.tx.Load())
			}
		})
	}
}

// BenchmarkUDPBatchSend measures the UDP_STREAM sender (header fill + sendmmsg, with and
// without GSO) to a loopback socket that nobody reads: one op is one datagram handed to the
// kernel.
func BenchmarkUDPBatchSend(b *testing.B) {
	for _, tc := range []struct {
		name string
		size int
		gso  bool
	}{{"64B-gso", 64, true}, {"64B-mmsg", 64, false}, {"1400B-gso", 1400, true}, {"1400B-mmsg", 1400, false}} {
		b.Run(tc.name, func(b *testing.B) {
			lo := netip.MustParseAddr("127.0.0.1")
			rfd, port, err := bindUDP(lo, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(rfd)
			sfd, err := newSocket(lo, unix.SOCK_DGRAM)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Close(sfd)
			if err := unix.Connect(sfd, sockaddr(lo, port)); err != nil {
				b.Fatal(err)
			}
			if err := setTimeouts(sfd, ioTimeout); err != nil {
				b.Fatal(err)
			}
			f := &flowState{fd: sfd}
			var phase atomic.Int32
			phase.Store(phaseMeasure)
			want := int64(b.N) * int64(tc.size)
			b.SetBytes(int64(tc.size))
			b.ResetTimer()
			if _, err := udpStreamSend(f, udpSendOptions{size: tc.size, gso: tc.gso}, &phase, func() bool { return f.c.bytesTx.Load() >= want }); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(f.c.bytesTx.Load()/int64(tc.size))/b.Elapsed().Seconds(), "pkts/s")
		})
	}
}
