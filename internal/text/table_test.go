package text

import (
	"bytes"
	"strings"
	"testing"
)

func TestTableAlignsRunesAndHides(t *testing.T) {
	tb := &Table{Header: []string{"A", "VALUE", "HIDDEN", "Δ"}, Right: map[int]bool{1: true},
		Hide: map[int]bool{2: true},
		Rows: [][]string{{"µs", "1.5 ± 0.2", "x", "−3%"}, {"long name", "10", "y", ""}}}
	var b bytes.Buffer
	if err := tb.Write(&b, "  "); err != nil {
		t.Fatal(err)
	}
	want := "  A              VALUE  Δ\n" +
		"  µs         1.5 ± 0.2  −3%\n" +
		"  long name         10\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := tb.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	wantMD := "| A | VALUE | Δ |\n| --- | ---: | --- |\n| µs | 1.5 ± 0.2 | −3% |\n| long name | 10 |  |\n"
	if b.String() != wantMD {
		t.Errorf("markdown:\n%s\nwant:\n%s", b.String(), wantMD)
	}
}

func TestFitHidesInOrderUntilItFits(t *testing.T) {
	mk := func() *Table {
		return &Table{Header: []string{"ID", "NAME", "COV", "NOTE"},
			Rows: [][]string{{"1", "TCP_STREAM", "0.9%", "a long remark"}, {"2", "µ±", "12.0%", "-"}}}
	}
	for _, tc := range []struct {
		width   int
		drop    []int
		hidden  string
		fitting bool
	}{
		{width: 100, drop: []int{3, 2}, hidden: "", fitting: true},
		{width: 30, drop: []int{3, 2}, hidden: "NOTE", fitting: true},
		{width: 18, drop: []int{3, 2}, hidden: "NOTE,COV", fitting: true},
		{width: 10, drop: []int{3, 2}, hidden: "NOTE,COV", fitting: false}, // ID and NAME are not in drop
	} {
		tb := mk()
		hid := tb.Fit(tc.width, "  ", tc.drop)
		if got := strings.Join(hid, ","); got != tc.hidden {
			t.Errorf("width %d: hid %q, want %q", tc.width, got, tc.hidden)
		}
		var b bytes.Buffer
		if err := tb.Write(&b, "  "); err != nil {
			t.Fatal(err)
		}
		widest := 0
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			widest = max(widest, Width(l))
		}
		if widest != tb.LineWidth("  ") || (widest <= tc.width) != tc.fitting {
			t.Errorf("width %d: widest line %d, LineWidth %d, fitting %v:\n%s", tc.width, widest, tb.LineWidth("  "), tc.fitting, b.String())
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  []string
	}{
		{"one two three", 20, []string{"  one two three"}},
		{"one two three four", 12, []string{"  one two", "    three", "    four"}},
		{"averyveryverylongword x", 8, []string{"  averyveryverylongword", "    x"}},
		{"µs ± µs ± µs", 9, []string{"  µs ± µs", "    ± µs"}},
		{"", 10, []string{""}},
	} {
		if got := Wrap(tc.s, tc.width, "  ", "    "); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
		}
	}
}

// TestLogf: a progress line starts with its prefix and is wrapped to DefaultWidth with a
// hanging indent.
func TestLogf(t *testing.T) {
	var b strings.Builder
	Logf(&b, "kube: ", "%s", strings.Repeat("word ", 40))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "kube: word") || !strings.HasPrefix(lines[1], "  word") {
		t.Fatalf("%q", b.String())
	}
	for _, l := range lines {
		if Width(l) > DefaultWidth {
			t.Errorf("%d columns: %q", Width(l), l)
		}
	}
}

// TestWrapLines wraps real errors cnperf printed (collected from the test suites' runs, each
// wider than 120 columns) and checks what WrapLines promises: every line fits unless it is
// one unbreakable word, nothing is lost or reordered, no word, URL, path or quoted value is
// split, and lines that fit (and their spacing) are kept as they were.
func TestWrapLines(t *testing.T) {
	const apiErr = `cnperf: set up the kube platform: the API server https://127.0.0.1:29311 does not answer (nothing was created): ` +
		`check permission to get nodes (cluster-wide): Post "https://127.0.0.1:29311/apis/authorization.k8s.io/v1/selfsubjectaccessreviews": ` +
		`dial tcp 127.0.0.1:29311: connect: connection refused`
	for _, tc := range []struct {
		name  string
		s     string
		width int
		want  string   // the whole result, when given
		whole []string // pieces that must each stay on one line
	}{
		{name: "unknown plan field", width: 120,
			s: `cnperf: /tmp/TestPlanErrorsExit2BeforeRunning627268044/001/plan.yaml:6: tests[0].speed: unknown field "speed" (known: name, ` +
				`profiles, paths, drivers, messageSizes, responseSize, parallel, burst, duration, warmup, samples, maxSamples, confidence, ` +
				`excludeOutliers, timeout, rate, hostNetwork, service, ipFamily, network, options)`,
			want: `cnperf: /tmp/TestPlanErrorsExit2BeforeRunning627268044/001/plan.yaml:6: tests[0].speed: unknown field "speed" (known:` + "\n" +
				`  name, profiles, paths, drivers, messageSizes, responseSize, parallel, burst, duration, warmup, samples, maxSamples,` + "\n" +
				`  confidence, excludeOutliers, timeout, rate, hostNetwork, service, ipFamily, network, options)`},
		{name: "API server down", width: 120, s: apiErr,
			want: `cnperf: set up the kube platform: the API server https://127.0.0.1:29311 does not answer (nothing was created): check` + "\n" +
				`  permission to get nodes (cluster-wide): Post` + "\n" +
				`  "https://127.0.0.1:29311/apis/authorization.k8s.io/v1/selfsubjectaccessreviews": dial tcp 127.0.0.1:29311: connect:` + "\n" +
				`  connection refused`},
		{name: "narrow terminal", width: 60, s: apiErr,
			whole: []string{"https://127.0.0.1:29311", `"https://127.0.0.1:29311/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":`}},
		{name: "quoted value with spaces stays whole", width: 60,
			s: `cnperf: created NetworkAttachmentDefinition ns/macvlan-netperf (deleted at the end of the run): ` +
				`'{"cniVersion": "0.3.1", "type": "macvlan"}' and a "quoted value that has spaces" in it`,
			whole: []string{`'{"cniVersion": "0.3.1", "type": "macvlan"}'`, `"quoted value that has spaces"`}},
		{name: "apostrophes quote nothing", width: 40,
			s:    "cnperf: the image's name isn't valid: the kubelet's answer is InvalidImageName",
			want: "cnperf: the image's name isn't valid:\n  the kubelet's answer is\n  InvalidImageName"},
		{name: "an unclosed quote quotes nothing", width: 30,
			s:    `cnperf: bad value "abc def ghi jkl mno pqr stu`,
			want: "cnperf: bad value \"abc def ghi\n  jkl mno pqr stu"},
		{name: "lines that fit are kept, long ones keep their indent", width: 50,
			s: "cnperf: regression gate of 5% failed on 1 series\n" +
				"  TCP_STREAM native loopback 128KiB x1, throughput: -31.2% (12.1 → 8.3 Gbit/s)\n" +
				"  col   a    b",
			want: "cnperf: regression gate of 5% failed on 1 series\n" +
				"  TCP_STREAM native loopback 128KiB x1,\n" +
				"    throughput: -31.2% (12.1 → 8.3 Gbit/s)\n" +
				"  col   a    b"},
		{name: "a list wider than a line breaks after its commas", width: 40,
			s:    "cnperf: allowed formats are: table,wide,json,yaml,csv,k8s-netperf-csv,prometheus (did you mean",
			want: "cnperf: allowed formats are: table,wide,\n  json,yaml,csv,k8s-netperf-csv,\n  prometheus (did you mean"},
		{name: "a word wider than a line gets its own", width: 30,
			s:    "cnperf: open /var/lib/cnperf/results/2026-11-29/run-0001.jsonl: permission denied",
			want: "cnperf: open\n  /var/lib/cnperf/results/2026-11-29/run-0001.jsonl:\n  permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WrapLines(tc.s, tc.width, "  ")
			if tc.want != "" && got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields(tc.s), "") {
				t.Errorf("the words changed:\n%s", got)
			}
			for _, l := range strings.Split(got, "\n") {
				if Width(l) > tc.width && len(strings.Fields(l)) > 1 && !strings.ContainsAny(l, `"'`) {
					t.Errorf("%d columns, more than %d: %q", Width(l), tc.width, l)
				}
			}
			for _, w := range tc.whole {
				if !strings.Contains(got, w) {
					t.Errorf("%q was broken:\n%s", w, got)
				}
			}
		})
	}
}

// TestContainsFolded: a phrase is found in a message however either is wrapped.
func TestContainsFolded(t *testing.T) {
	for _, tc := range []struct {
		s, phrase string
		want      bool
	}{
		{"cnperf: the API server does not\n  answer (nothing was created)", "does not answer (nothing", true},
		{"a  b\tc", "a b c", true},
		{"a b", "a\n  b", true},
		{"ab c", "a b", false},
	} {
		if got := ContainsFolded(tc.s, tc.phrase); got != tc.want {
			t.Errorf("ContainsFolded(%q, %q) = %v", tc.s, tc.phrase, got)
		}
	}
}
