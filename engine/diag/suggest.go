package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Suggest returns the candidate closest to name when it is close enough to
// be a likely typo, or "".
func Suggest(name string, candidates []string) string {
	best, bestD := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := levenshtein(lname, strings.ToLower(c))
		if d == 0 {
			return c
		}
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	limit := len(name) / 3
	if limit < 1 {
		limit = 1
	}
	if limit > 3 {
		limit = 3
	}
	if bestD >= 0 && bestD <= limit {
		return best
	}
	return ""
}

// DidYouMean formats a suggestion as a suffix for a summary line.
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" && s != name {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// ValidList formats a sorted list of names for a detail line.
func ValidList(what string, names []string) string {
	s := append([]string(nil), names...)
	sort.Strings(s)
	q := make([]string, len(s))
	for i, n := range s {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("valid %s: %s", what, strings.Join(q, ", "))
}

// levenshtein returns the edit distance between a and b, counting the swap
// of two adjacent characters as one edit ("jion" is one edit from "join").
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// rows i-2, i-1 and i of the optimal string alignment distance
	prev2 := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
