package plan

import (
	"fmt"
	"strings"
)

// Closest returns the candidate nearest to word (case-insensitive edit distance of at most a
// third of its length, and at least 1), or "" when none is near. Ties go to the earlier
// candidate, so the answer never depends on map order.
func Closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	best, bestD := "", -1
	limit := max(1, len([]rune(w))/3)
	for _, c := range candidates {
		d := editDistance(w, strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (in runes), capped at 64 runes
// each to bound the work on hostile input.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 20
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Strings returns the names of a list of string-typed values (profiles, paths, ...) as plain
// strings, e.g. the candidates of Closest.
func Strings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Join lists string-typed values for a message or help text: "a, b, c".
func Join[T ~string](vs []T) string { return strings.Join(Strings(vs), ", ") }

// Unknown says that raw (v once normalized) is none of the known values of what, with a
// did-you-mean and the known ones: `unknown path "x" (did you mean "y"?) (known: a, b)`.
func Unknown[T ~string](what, raw string, v T, known []T) string {
	msg := fmt.Sprintf("unknown %s %q", what, raw)
	if s := Closest(string(v), Strings(known)); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Sprintf("%s (known: %s)", msg, Join(known))
}
