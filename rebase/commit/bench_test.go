package commit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/gitrepo"
)

// BenchmarkPhases measures the commits of a run's write (every phase, exact bytes through the
// private index, hooks, verification) in a repository the size of a MicroShift checkout
// (20 000 files besides the storage files): go test -run '^$' -bench Phases ./rebase/commit/
func BenchmarkPhases(b *testing.B) {
	withIdentity(b)
	dir, _ := newRepo(b, "5.0")
	for i := range 20000 {
		gitrepo.WriteFile(b, dir, fmt.Sprintf("vendor/m%03d/f%05d.go", i/200, i), "package m\n", 0o644)
	}
	gitrepo.Git(b, dir, "add", "-A")
	gitrepo.Git(b, dir, "commit", "-qm", "vendor")
	base := strings.TrimSpace(gitrepo.Git(b, dir, "rev-parse", "HEAD"))
	in := rebaseWrites.input(dir, record50)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		gitrepo.Git(b, dir, "reset", "-q", "--hard", base)
		rebaseWrites.apply(b, dir)
		if err := os.RemoveAll(filepath.Join(dir, "NOTES")); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if made, err := Phases(context.Background(), in); err != nil || len(made) != 4 {
			b.Fatalf("%q, %v", made, err)
		}
	}
}
