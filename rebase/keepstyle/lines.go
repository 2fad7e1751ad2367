package keepstyle

import (
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// The encoder writes what it writes: a file with blank lines, aligned values or comments in
// odd places loses them wherever it is re-encoded. So an encoded edit is laid back onto the
// original file line by line. The base is the original tree encoded unedited; the original
// file differs from it only in formatting, the edited encoding only in the change. The
// change's line edits (base → edited) are applied to the original, whose lines stand in for
// the base lines they match; lines the original inserted (blank lines, comments) stay before
// the line they precede. A change that deletes or splits a run of base lines the original
// formats differently is a conflict, and then the edited encoding is used whole.

// maxMergeLines bounds the files merged line by line: a line diff costs up to the product
// of the line counts (MicroShift's largest asset has about 500 lines); a larger file keeps
// the edited encoding.
const maxMergeLines = 20000

// mergeLines applies the line edits from base to theirs onto ours, or reports a conflict.
func mergeLines(base, ours, theirs string) (string, bool) {
	b, o, t := splitAfterLines(base), splitAfterLines(ours), splitAfterLines(theirs)
	if max(len(b), len(o), len(t)) > maxMergeLines {
		return "", false
	}
	lead, own, run := anchorLines(b, o, matchLines(base, ours))
	mt := matchLines(base, theirs)
	var out strings.Builder
	k := 0
	for i := 0; i <= len(b); i++ {
		next := len(t)
		if i < len(b) && mt[i] >= 0 {
			next = mt[i]
		} else if i < len(b) {
			next = k // deleted by theirs: its insertions come with the next kept line
		}
		if next > k && i < len(b) && i > 0 && run[i] >= 0 && run[i] == run[i-1] {
			return "", false // an insertion inside a run the original formats differently
		}
		for ; k < next; k++ {
			out.WriteString(t[k])
		}
		out.WriteString(lead[i])
		if i == len(b) {
			break
		}
		if mt[i] < 0 {
			if run[i] >= 0 {
				return "", false // theirs deletes a line the original formats differently
			}
			continue
		}
		out.WriteString(own[i])
		k = mt[i] + 1
	}
	return out.String(), true
}

// anchorLines ties every line of ours to a base line: own[i] is ours' copy of base line i
// ("" when ours has none), lead[i] what ours has before it that matches no base line
// (lead[len(base)]: after the last). A run of base lines ours does not have shares one run
// number (else -1), and ours' lines in their place are the lead of the run's first line.
func anchorLines(b, o []string, mo []int) (lead, own []string, run []int) {
	lead, own, run = make([]string, len(b)+1), make([]string, len(b)), make([]int, len(b))
	j, first := 0, -1
	for i := 0; i <= len(b); i++ {
		end := len(o)
		if i < len(b) {
			if run[i] = -1; mo[i] < 0 {
				if first < 0 || (i > 0 && run[i-1] < 0) {
					first = i
				}
				run[i] = first
				continue
			}
			end = mo[i]
		}
		at := i
		if i > 0 && run[i-1] >= 0 {
			at = run[i-1]
		}
		lead[at] = strings.Join(o[j:end], "")
		if i < len(b) {
			own[i], j = o[end], end+1
		}
	}
	return lead, own, run
}

// matchLines returns, for every line of a, the index of the line of b a shortest line diff
// pairs it with, or -1.
func matchLines(a, b string) []int {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ra, rb, _ := dmp.DiffLinesToRunes(a, b)
	out := make([]int, 0, len(ra))
	bi := 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		n := utf8.RuneCountInString(d.Text)
		for x := 0; x < n; x++ {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				out = append(out, bi)
				bi++
			case diffmatchpatch.DiffDelete:
				out = append(out, -1)
			case diffmatchpatch.DiffInsert:
				bi++
			}
		}
	}
	return out
}

func splitAfterLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
