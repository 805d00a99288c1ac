package loadgen

// udpAcct counts one UDP flow's received datagrams exactly as iperf3 does (iperf_udp_recv):
// sequence numbers start at 1; a forward gap adds to the loss count; a packet that goes
// backward is out of order and takes one loss back; jitter follows RFC 1889 (6.3.1, A.8):
// J += (|D(i-1,i)| - J)/16 with D the difference of transit times, the first packet only
// initialising the previous transit time.
type udpAcct struct {
	packets     int64
	bytes       int64
	highest     uint64 // iperf3's packet_count
	lost        int64  // iperf3's cnt_error
	outOfOrder  int64
	jitterNs    float64
	prevTransit int64
	started     bool
}

// add accounts one datagram with sequence seq, sent at sentNs (sender's clock) and received
// at arrivalNs (receiver's clock); the clocks' offset cancels out in the jitter.
func (a *udpAcct) add(seq uint64, size int, sentNs, arrivalNs int64) {
	a.packets++
	a.bytes += int64(size)
	if seq >= a.highest+1 {
		if seq > a.highest+1 {
			a.lost += int64(seq - 1 - a.highest)
		}
		a.highest = seq
	} else {
		a.outOfOrder++
		if a.lost > 0 {
			a.lost--
		}
	}
	transit := arrivalNs - sentNs
	if !a.started {
		a.prevTransit = transit
		a.started = true
	}
	d := transit - a.prevTransit
	if d < 0 {
		d = -d
	}
	a.prevTransit = transit
	a.jitterNs += (float64(d) - a.jitterNs) / 16
}

// finish adds the datagrams sent after the highest one received (lastSent is the sender's
// last sequence number): iperf3 cannot see those, we can because the client reports it.
func (a *udpAcct) finish(lastSent uint64) {
	if lastSent > a.highest {
		a.lost += int64(lastSent - a.highest)
		a.highest = lastSent
	}
}
