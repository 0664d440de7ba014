package review

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEditScripts: on pairs of short texts of a few distinct lines, the
// edit script of myers (alone, without the common ends set aside) and of
// lineDiff turns one text into the other in as few edits as possible.
func TestEditScripts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func() []string {
		out := make([]string, r.IntN(7))
		for i := range out {
			out[i] = string(rune('a' + r.IntN(3)))
		}
		return out
	}
	for range 500 {
		a, b := text(), text()
		for name, diff := range map[string]func(a, b []string) []diffOp{"myers": myers, "lineDiff": lineDiff} {
			var from, to []string
			edits := 0
			for _, op := range diff(a, b) {
				if op.kind != '+' {
					from = append(from, op.line)
				}
				if op.kind != '-' {
					to = append(to, op.line)
				}
				if op.kind != ' ' {
					edits++
				}
			}
			if want := len(a) + len(b) - 2*commonLines(a, b); !slices.Equal(from, a) || !slices.Equal(to, b) || edits != want {
				t.Fatalf("%s(%q, %q) rebuilds %q and %q in %d edits, want %d", name, a, b, from, to, edits, want)
			}
		}
	}
}

// commonLines is the length of the longest common subsequence of a and b.
func commonLines(a, b []string) int {
	n := make([][]int, len(a)+1)
	for i := range n {
		n[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				n[i][j] = n[i+1][j+1] + 1
			} else {
				n[i][j] = max(n[i+1][j], n[i][j+1])
			}
		}
	}
	return n[0][0]
}
