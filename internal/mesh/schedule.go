// Package mesh measures a whole cluster: every ordered pair of nodes (or a seeded random
// sample of them) scheduled in rounds in which no node takes part in two measurements at
// once, and every node against one server (all-to-one). It places one agent per node with a
// DaemonSet (pod network and hostNetwork variants), reads each node's CPU and memory over
// every measured window, and builds the node × node matrix with its outlier pairs.
package mesh

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// Pair is one ordered measurement between nodes, as indices into the node list: Client
// measures against Server. Client == Server is a same-node measurement.
type Pair struct{ Client, Server int }

// ScheduleOptions choose the pairs.
type ScheduleOptions struct {
	// SamplePairs > 0 measures a random sample of that many ordered pairs (all of them when
	// it is not below their number).
	SamplePairs int
	// Seed makes the sample reproducible.
	Seed uint64
	// Self adds the same-node pair of every node (the matrix's diagonal).
	Self bool
}

// Schedule is the pairs of a mesh grouped into rounds: the pairs of one round run at the
// same time, and no node takes part in two pairs of a round.
type Schedule struct {
	Nodes  int
	Rounds [][]Pair
	// PairsTotal is the number of pairs there are; Pairs the number scheduled.
	PairsTotal int
	Pairs      int
	Sampled    bool
	Seed       uint64
}

// NewSchedule schedules the ordered pairs of n nodes. Without sampling it is two round-robin
// tournaments (circle method) with the roles swapped in the second: 2(n−1) rounds for even
// n, 2n for odd n, every round as full as n allows, plus one round of same-node pairs with
// Self. A sample is packed into rounds first-fit (at most 2Δ−1 rounds for a node that takes
// part in Δ pairs).
func NewSchedule(n int, o ScheduleOptions) (*Schedule, error) {
	if n < 1 {
		return nil, fmt.Errorf("mesh: no nodes to schedule")
	}
	if o.SamplePairs < 0 {
		return nil, fmt.Errorf("mesh: a sample of %d pairs", o.SamplePairs)
	}
	total := n * (n - 1)
	if o.Self {
		total += n
	}
	if total == 0 {
		return nil, fmt.Errorf("mesh: one node has no pairs (add the same-node pair to measure it against itself)")
	}
	s := &Schedule{Nodes: n, PairsTotal: total, Seed: o.Seed}
	if o.SamplePairs == 0 || o.SamplePairs >= total {
		s.Rounds = OrderedRounds(n)
		if o.Self {
			self := make([]Pair, n)
			for i := range self {
				self[i] = Pair{i, i}
			}
			s.Rounds = append(s.Rounds, self)
		}
		s.Pairs = total
		return s, nil
	}
	pairs := SamplePairs(n, o.SamplePairs, o.Seed, o.Self)
	s.Rounds = PackRounds(n, pairs)
	s.Pairs, s.Sampled = len(pairs), true
	return s, nil
}

// Tournament is a round-robin tournament of n players by the circle method: every unordered
// pair of distinct players meets exactly once, and nobody plays twice in a round. With an odd
// n one player sits out each round. The first element of each pair is the one listed first
// in the circle; orientation alternates for the fixed player so roles are balanced.
func Tournament(n int) [][]Pair {
	if n < 2 {
		return nil
	}
	m := n
	if m%2 == 1 {
		m++ // player n is the bye
	}
	circle := make([]int, m-1)
	for i := range circle {
		circle[i] = i + 1
	}
	rounds := make([][]Pair, 0, m-1)
	for r := 0; r < m-1; r++ {
		round := make([]Pair, 0, m/2)
		// seat 0 is fixed (player 0); seats 1..m-1 hold the circle rotated by r.
		seat := func(i int) int {
			if i == 0 {
				return 0
			}
			return circle[(i-1+r)%(m-1)]
		}
		for i := 0; i < m/2; i++ {
			a, b := seat(i), seat(m-1-i)
			if a >= n || b >= n {
				continue // the bye
			}
			if i == 0 && r%2 == 1 {
				a, b = b, a
			}
			round = append(round, Pair{a, b})
		}
		rounds = append(rounds, round)
	}
	return rounds
}

// OrderedRounds schedules every ordered pair of n distinct nodes: a tournament, then the same
// tournament with client and server swapped.
func OrderedRounds(n int) [][]Pair {
	first := Tournament(n)
	out := make([][]Pair, 0, 2*len(first))
	out = append(out, first...)
	for _, r := range first {
		sw := make([]Pair, len(r))
		for i, p := range r {
			sw[i] = Pair{p.Server, p.Client}
		}
		out = append(out, sw)
	}
	return out
}

// SamplePairs draws k distinct ordered pairs of n nodes uniformly at random (same-node pairs
// included with self), reproducibly for a seed, in ascending (client, server) order.
func SamplePairs(n, k int, seed uint64, self bool) []Pair {
	per := n - 1
	if self {
		per = n
	}
	total := n * per
	if k > total {
		k = total
	}
	rng := rand.NewPCG(seed, 0x636e706572666d73) // "cnperfms"
	var idx []int
	if k > total/2 {
		// Dense: a partial Fisher–Yates shuffle of every index.
		all := make([]int, total)
		for i := range all {
			all[i] = i
		}
		for i := 0; i < k; i++ {
			j := i + int(bounded(rng, uint64(total-i)))
			all[i], all[j] = all[j], all[i]
		}
		idx = all[:k]
	} else {
		// Sparse: Floyd's algorithm, k draws and a set.
		set := make(map[int]struct{}, k)
		idx = make([]int, 0, k)
		for j := total - k; j < total; j++ {
			t := int(bounded(rng, uint64(j+1)))
			if _, dup := set[t]; dup {
				t = j
			}
			set[t] = struct{}{}
			idx = append(idx, t)
		}
	}
	sort.Ints(idx)
	out := make([]Pair, len(idx))
	for i, x := range idx {
		c, j := x/per, x%per
		s := j
		if !self && j >= c {
			s = j + 1
		}
		out[i] = Pair{c, s}
	}
	return out
}

// bounded returns a uniform value in [0, n) (Lemire's multiply-and-reject), so the sample
// depends only on the PCG stream, not on a library's choice of method.
func bounded(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// PackRounds puts pairs into rounds first-fit, in the given order: each pair goes to the
// first round in which neither of its nodes is busy.
func PackRounds(n int, pairs []Pair) [][]Pair {
	busy := make([][]uint64, n) // per node, a bitset of rounds it takes part in
	var rounds [][]Pair
	for _, p := range pairs {
		a, b := busy[p.Client], busy[p.Server]
		r := 0
		for w := 0; ; w++ {
			var x uint64
			if w < len(a) {
				x |= a[w]
			}
			if w < len(b) {
				x |= b[w]
			}
			if x != ^uint64(0) {
				r = w*64 + bits.TrailingZeros64(^x)
				break
			}
		}
		for len(rounds) <= r {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], p)
		setBit(&busy[p.Client], r)
		setBit(&busy[p.Server], r)
	}
	return rounds
}

func setBit(b *[]uint64, r int) {
	for len(*b) <= r/64 {
		*b = append(*b, 0)
	}
	(*b)[r/64] |= 1 << (r % 64)
}

// Check verifies that rounds are a valid schedule of exactly the pairs want (every one once,
// nothing else) for n nodes, with no node in two pairs of a round.
func Check(n int, rounds [][]Pair, want []Pair) error {
	seen := make(map[Pair]int, len(want))
	for _, p := range want {
		seen[p] = -1
	}
	lastRound := make([]int, n)
	for i := range lastRound {
		lastRound[i] = -1
	}
	count := 0
	for r, round := range rounds {
		for _, p := range round {
			if p.Client < 0 || p.Client >= n || p.Server < 0 || p.Server >= n {
				return fmt.Errorf("round %d: pair %d→%d names a node outside 0..%d", r, p.Client, p.Server, n-1)
			}
			nodes := []int{p.Client, p.Server}
			if p.Client == p.Server {
				nodes = nodes[:1]
			}
			for _, x := range nodes {
				if lastRound[x] == r {
					return fmt.Errorf("round %d: node %d takes part twice", r, x)
				}
				lastRound[x] = r
			}
			prev, ok := seen[p]
			if !ok {
				return fmt.Errorf("round %d: pair %d→%d was not asked for", r, p.Client, p.Server)
			}
			if prev >= 0 {
				return fmt.Errorf("pair %d→%d is scheduled twice (rounds %d and %d)", p.Client, p.Server, prev, r)
			}
			seen[p] = r
			count++
		}
	}
	if count != len(want) {
		for _, p := range want {
			if seen[p] < 0 {
				return fmt.Errorf("pair %d→%d is not scheduled (%d of %d are)", p.Client, p.Server, count, len(want))
			}
		}
	}
	return nil
}

// AllPairs lists every ordered pair of n nodes in (client, server) order.
func AllPairs(n int, self bool) []Pair {
	var out []Pair
	for c := 0; c < n; c++ {
		for s := 0; s < n; s++ {
			if c != s || self {
				out = append(out, Pair{c, s})
			}
		}
	}
	return out
}

// All returns the schedule's pairs in round order.
func (s *Schedule) All() []Pair {
	out := make([]Pair, 0, s.Pairs)
	for _, r := range s.Rounds {
		out = append(out, r...)
	}
	return out
}
