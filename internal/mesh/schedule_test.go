package mesh

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func TestScheduleAllPairsValidAndComplete(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 6, 7, 50, 51, 500} {
		for _, self := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/self=%v", n, self), func(t *testing.T) {
				s, err := NewSchedule(n, ScheduleOptions{Self: self})
				if err != nil {
					t.Fatal(err)
				}
				want := AllPairs(n, self)
				if err := Check(n, s.Rounds, want); err != nil {
					t.Fatal(err)
				}
				if s.Pairs != len(want) || s.PairsTotal != len(want) || s.Sampled {
					t.Fatalf("pairs %d total %d sampled %v, want %d %d false", s.Pairs, s.PairsTotal, s.Sampled, len(want), len(want))
				}
				// The circle method is optimal: 2(n−1) rounds of n/2 pairs for even n, 2n
				// rounds of (n−1)/2 for odd n (a node sits out each round).
				wantRounds, perRound := 2*(n-1), n/2
				if n%2 == 1 {
					wantRounds = 2 * n
				}
				if self {
					wantRounds++
				}
				if len(s.Rounds) != wantRounds {
					t.Fatalf("%d rounds, want %d", len(s.Rounds), wantRounds)
				}
				for r, round := range s.Rounds {
					if self && r == len(s.Rounds)-1 {
						if len(round) != n {
							t.Fatalf("self round has %d pairs, want %d", len(round), n)
						}
						continue
					}
					if len(round) != perRound {
						t.Fatalf("round %d has %d pairs, want %d", r, len(round), perRound)
					}
				}
			})
		}
	}
}

func TestScheduleRolesBalanced(t *testing.T) {
	// Over the whole schedule every node is client n−1 times and server n−1 times.
	for _, n := range []int{3, 4, 5, 50} {
		s, err := NewSchedule(n, ScheduleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cl, sv := make([]int, n), make([]int, n)
		for _, p := range s.All() {
			cl[p.Client]++
			sv[p.Server]++
		}
		for i := 0; i < n; i++ {
			if cl[i] != n-1 || sv[i] != n-1 {
				t.Fatalf("n=%d node %d: client %d server %d times, want %d each", n, i, cl[i], sv[i], n-1)
			}
		}
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, tc := range []struct {
		n int
		o ScheduleOptions
	}{
		{0, ScheduleOptions{}},
		{1, ScheduleOptions{}},
		{3, ScheduleOptions{SamplePairs: -1}},
	} {
		if _, err := NewSchedule(tc.n, tc.o); err == nil {
			t.Errorf("NewSchedule(%d, %+v): no error", tc.n, tc.o)
		}
	}
	s, err := NewSchedule(1, ScheduleOptions{Self: true})
	if err != nil || len(s.Rounds) != 1 || s.Rounds[0][0] != (Pair{0, 0}) {
		t.Fatalf("one node with self: %+v %v", s, err)
	}
}

func TestSampledSchedule(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		self bool
	}{
		{3, 2, false}, {5, 7, true}, {50, 100, false}, {50, 2000, false}, // dense: > half of 2450
		{500, 1000, false}, {500, 200000, true},
	} {
		t.Run(fmt.Sprintf("n=%d/k=%d", tc.n, tc.k), func(t *testing.T) {
			o := ScheduleOptions{SamplePairs: tc.k, Seed: 42, Self: tc.self}
			s, err := NewSchedule(tc.n, o)
			if err != nil {
				t.Fatal(err)
			}
			want := SamplePairs(tc.n, tc.k, 42, tc.self)
			if len(want) != tc.k || s.Pairs != tc.k || !s.Sampled {
				t.Fatalf("sample has %d pairs (schedule %d, sampled %v), want %d", len(want), s.Pairs, s.Sampled, tc.k)
			}
			seen := map[Pair]bool{}
			for _, p := range want {
				if seen[p] {
					t.Fatalf("pair %v drawn twice", p)
				}
				seen[p] = true
				if p.Client == p.Server && !tc.self {
					t.Fatalf("same-node pair %v without self", p)
				}
			}
			if err := Check(tc.n, s.Rounds, want); err != nil {
				t.Fatal(err)
			}
			// First-fit needs at most 2Δ−1 rounds.
			deg := make([]int, tc.n)
			for _, p := range want {
				deg[p.Client]++
				if p.Server != p.Client {
					deg[p.Server]++
				}
			}
			maxDeg := 0
			for _, d := range deg {
				maxDeg = max(maxDeg, d)
			}
			if len(s.Rounds) > 2*maxDeg-1 {
				t.Fatalf("%d rounds for max degree %d", len(s.Rounds), maxDeg)
			}
			// Reproducible for a seed, different for another.
			again, _ := NewSchedule(tc.n, o)
			if !reflect.DeepEqual(again.Rounds, s.Rounds) {
				t.Fatal("same seed, different schedule")
			}
			if tc.k < tc.n*(tc.n-1)/2 {
				other := SamplePairs(tc.n, tc.k, 43, tc.self)
				if reflect.DeepEqual(other, want) {
					t.Fatal("seeds 42 and 43 drew the same sample")
				}
			}
		})
	}
}

func TestSampleIsUniform(t *testing.T) {
	// Every ordered pair of 4 nodes (12) should be drawn about equally often over many seeds:
	// 6000 draws of 2 pairs = 1000 expected per pair; a biased index mapping (e.g. never
	// drawing the last server of a row) shows up as 0 or ~2000.
	n, k := 4, 2
	count := map[Pair]int{}
	for seed := uint64(0); seed < 6000; seed++ {
		for _, p := range SamplePairs(n, k, seed, false) {
			count[p]++
		}
	}
	if len(count) != 12 {
		t.Fatalf("drew %d distinct pairs, want 12: %v", len(count), count)
	}
	for p, c := range count {
		if c < 850 || c > 1150 {
			t.Errorf("pair %v drawn %d times, want about 1000", p, c)
		}
	}
}

func TestSampleAllIsFullSchedule(t *testing.T) {
	s, err := NewSchedule(5, ScheduleOptions{SamplePairs: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Sampled || len(s.Rounds) != 10 {
		t.Fatalf("k = every pair should give the tournament schedule, got sampled=%v rounds=%d", s.Sampled, len(s.Rounds))
	}
}

func TestCheckCatchesBadSchedules(t *testing.T) {
	want := AllPairs(3, false)
	good := OrderedRounds(3)
	if err := Check(3, good, want); err != nil {
		t.Fatal(err)
	}
	for name, rounds := range map[string][][]Pair{
		"node twice in a round": {{{0, 1}, {1, 2}}, {{2, 0}}, {{1, 0}}, {{2, 1}}, {{0, 2}}},
		"missing pair":          good[:len(good)-1],
		"duplicate pair":        append(append([][]Pair{}, good...), []Pair{{0, 1}}),
		"unknown pair":          append(append([][]Pair{}, good...), []Pair{{1, 1}}),
		"out of range":          append(append([][]Pair{}, good...), []Pair{{0, 3}}),
		"self pair in a busy round": func() [][]Pair {
			return [][]Pair{{{0, 1}, {0, 0}}}
		}(),
	} {
		w := want
		if name == "self pair in a busy round" {
			w = []Pair{{0, 1}, {0, 0}}
		}
		if err := Check(3, rounds, w); err == nil {
			t.Errorf("%s: Check found nothing wrong", name)
		}
	}
}

// TestSimulated500NodeCluster lists 500 nodes (and a few unusable ones) from a fake
// clientset, as `cnperf mesh` does, and schedules every ordered pair (249,500) and a
// sample. The fake clientset stands in for a 500-node API server, which cannot run here.
func TestSimulated500NodeCluster(t *testing.T) {
	var objs []runtime.Object
	for i := 0; i < 500; i++ {
		objs = append(objs, node(fmt.Sprintf("worker-%03d", i), true, false, nil))
	}
	objs = append(objs,
		node("notready", false, false, nil),
		node("cordoned", true, true, nil),
		node("control-plane", true, false, []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}),
		node("gpu", true, false, []corev1.Taint{{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}}),
	)
	cs := fake.NewSimpleClientset(objs...)
	ctx := context.Background()

	start := time.Now()
	nodes, skipped, err := ListNodes(ctx, cs, NodeFilter{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "yes"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSchedule(len(nodes), ScheduleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if len(nodes) != 501 {
		t.Fatalf("%d usable nodes, want 501 (500 workers + the tolerated gpu node)", len(nodes))
	}
	if got := fmt.Sprint(skipped); got != "[{control-plane taint node-role.kubernetes.io/control-plane:NoSchedule not tolerated (see --tolerations)} {cordoned cordoned (unschedulable)} {notready not Ready}]" {
		t.Fatalf("skipped: %s", got)
	}
	if err := Check(len(nodes), s.Rounds, AllPairs(len(nodes), false)); err != nil {
		t.Fatal(err)
	}
	t.Logf("501 nodes: listed and scheduled %d pairs in %d rounds in %s", s.Pairs, len(s.Rounds), elapsed)

	sampled, err := NewSchedule(len(nodes), ScheduleOptions{SamplePairs: 5000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(len(nodes), sampled.Rounds, SamplePairs(len(nodes), 5000, 7, false)); err != nil {
		t.Fatal(err)
	}
	t.Logf("sample of 5000 pairs: %d rounds", len(sampled.Rounds))
}

func TestListNodesByName(t *testing.T) {
	cs := fake.NewSimpleClientset(node("b", true, false, nil), node("a", true, false, nil), node("c", true, false, nil))
	nodes, skipped, err := ListNodes(context.Background(), cs, NodeFilter{Names: []string{"c", "a", "zz"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(Names(nodes)); got != "[a c]" {
		t.Fatalf("nodes %s", got)
	}
	if len(skipped) != 1 || skipped[0].Node != "zz" {
		t.Fatalf("skipped %v", skipped)
	}
}

func node(name string, ready, cordoned bool, taints []corev1.Taint) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelZone: "zone-" + name[len(name)-1:]}},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned, Taints: taints},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		},
	}
}

func BenchmarkSchedule500(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NewSchedule(500, ScheduleOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSample500(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := NewSchedule(500, ScheduleOptions{SamplePairs: 10000, Seed: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
