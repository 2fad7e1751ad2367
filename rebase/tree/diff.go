package tree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// contextLines is the number of unchanged lines around each change, as in `diff -u`.
const contextLines = 3

// maxDiffFile caps what Diff reads of one file of the tree (the managed files are
// manifests and records of a few KB).
const maxDiffFile = 64 << 20

// Diff returns a unified diff (git style: a/ and b/ paths, /dev/null for added and removed
// files with git's "new file mode"/"deleted file mode" lines, so that git apply takes it,
// "old mode"/"new mode" lines when the executable bit changes) from the tree at root
// to files, covering the same paths as Compute. Files are in path order; an unchanged tree
// gives "". A symlink in the tree is shown as git shows one, by its target: it is never
// read through.
func Diff(root string, files map[string][]byte, managedDirs []string) (string, error) {
	p, err := Compute(root, files, managedDirs)
	if err != nil {
		return "", err
	}
	type entry struct {
		rel      string
		old, new *string
		modes    string // "old mode …\nnew mode …\n" when the executable bit changes; "new file mode …" or "deleted file mode …"
	}
	var entries []entry
	for _, rel := range p.Add {
		s := string(files[rel])
		// git apply wants the mode of a file a patch creates or deletes.
		entries = append(entries, entry{rel: rel, new: &s, modes: "new file mode " + gitMode(newFileMode(files[rel])) + "\n"})
	}
	for _, rel := range p.Change {
		old, oldMode, err := readForDiff(root, rel)
		if err != nil {
			return "", err
		}
		s := string(files[rel])
		e := entry{rel: rel, old: &old, new: &s}
		if newMode := fileMode(root, rel, files[rel]); oldMode != nil && isExec(*oldMode) != isExec(newMode) {
			e.modes = fmt.Sprintf("old mode %s\nnew mode %s\n", gitMode(*oldMode), gitMode(newMode))
		}
		entries = append(entries, e)
	}
	for _, rel := range p.Remove {
		old, oldMode, err := readForDiff(root, rel)
		if err != nil {
			return "", err
		}
		mode := "120000" // a symlink, shown by its target
		if oldMode != nil {
			mode = gitMode(*oldMode)
		}
		entries = append(entries, entry{rel: rel, old: &old, modes: "deleted file mode " + mode + "\n"})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n", e.rel, e.rel)
		b.WriteString(e.modes)
		if e.old != nil && e.new != nil && *e.old == *e.new {
			continue // the mode alone changed
		}
		from, to := "a/"+e.rel, "b/"+e.rel
		var oldText, newText string
		if e.old == nil {
			from = "/dev/null"
		} else {
			oldText = *e.old
		}
		if e.new == nil {
			to = "/dev/null"
		} else {
			newText = *e.new
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		b.WriteString(Unified(oldText, newText))
	}
	return b.String(), nil
}

// readForDiff returns what the tree holds at rel as text: a regular file's bytes (at most
// maxDiffFile) with its mode, or a symlink's target (no mode), as git shows a symlink.
func readForDiff(root, rel string) (string, *fs.FileMode, error) {
	full := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(full)
	if err != nil {
		return "", nil, fmt.Errorf("diff: reading %s: %w", rel, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(full)
		if err != nil {
			return "", nil, fmt.Errorf("diff: reading %s: %w", rel, err)
		}
		return target, nil, nil
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("diff: %w", specialFileError(rel, fi))
	}
	b, err := safefile.ReadFile(full, safefile.Options{Max: maxDiffFile})
	if err != nil {
		return "", nil, fmt.Errorf("diff: reading %s: %w", rel, err)
	}
	mode := fi.Mode()
	return string(b), &mode, nil
}

// gitMode is the mode git records for a regular file.
func gitMode(m fs.FileMode) string {
	if isExec(m) {
		return "100755"
	}
	return "100644"
}

// Unified returns the hunks ("@@ -l,n +l,n @@" and their lines) turning a into b, with
// "\ No newline at end of file" markers as diff(1) writes them.
func Unified(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(a, b)
	var out strings.Builder
	// Group ops into hunks: runs of changes with up to 2*contextLines of equal lines between.
	i := 0
	for i < len(ops) {
		// Find the next change.
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-contextLines, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*contextLines {
				end = min(end+contextLines, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := ops[start].ai, ops[start].bi
		var aLen, bLen int
		var body strings.Builder
		for _, o := range ops[start:end] {
			switch o.kind {
			case ' ':
				aLen++
				bLen++
				writeLine(&body, ' ', x[o.ai])
			case '-':
				aLen++
				writeLine(&body, '-', x[o.ai])
			case '+':
				bLen++
				writeLine(&body, '+', y[o.bi])
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		out.WriteString(body.String())
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start) // diff(1) names the line before an empty range
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func writeLine(b *strings.Builder, kind byte, line string) {
	b.WriteByte(kind)
	if strings.HasSuffix(line, "\n") {
		b.WriteString(line)
		return
	}
	b.WriteString(line)
	b.WriteString("\n\\ No newline at end of file\n")
}

// splitLines splits after each newline; a final line without one is kept as is.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type op struct {
	kind   byte // ' ', '-', '+'
	ai, bi int  // line index in a and b at this op (for '+' ai is the insertion point)
}

// diffLines is a shortest line edit script from a to b: Myers' algorithm as
// sergi/go-diff implements it (already linked through kustomize), one rune per line, run
// without its time limit so that it never settles for a longer script.
func diffLines(a, b string) []op {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ra, rb, _ := dmp.DiffLinesToRunes(a, b)
	var ops []op
	ai, bi := 0, 0
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		for range utf8.RuneCountInString(d.Text) {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				ops = append(ops, op{' ', ai, bi})
				ai, bi = ai+1, bi+1
			case diffmatchpatch.DiffDelete:
				ops = append(ops, op{'-', ai, bi})
				ai++
			case diffmatchpatch.DiffInsert:
				ops = append(ops, op{'+', ai, bi})
				bi++
			}
		}
	}
	return ops
}
