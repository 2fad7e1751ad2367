package attack

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/binary"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// The suite's shared parts, set up once by TestMain (none under -short: every test skips).
var (
	// bin is lvms-rebase built with the write failpoints (binary.FailpointsTag).
	bin string
	// reg is the loopback registry every row that needs no fault of its own shares.
	reg *testregistry.Registry
	// testdata is the checkout's testdata/ (fixture trees, golden assets).
	testdata string
	// templates holds the trees rows copy: fresh (a 5.0 tree before any rebase, committed),
	// rebased (the same after a rebase with --commit), clone (branches main, release-4.22 and
	// release-4.17), cache (the warm image cache of the rebase), assets (golden 4.18 assets).
	templates string
)

// Template names under templates.
const (
	tplFresh   = "fresh"
	tplRebased = "rebased"
	tplClone   = "clone"
	tplCache   = "cache"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Rows mostly wait on their processes (and on faults, signals, hooks): run more of them
	// at once than there are cores, unless -parallel was given.
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == strconv.Itoa(runtime.GOMAXPROCS(0)) {
		_ = flag.Set("test.parallel", strconv.Itoa(max(4, 2*runtime.GOMAXPROCS(0))))
	}
	if testing.Short() {
		os.Exit(m.Run())
	}
	root, err := os.MkdirTemp("", "lvms-rebase-attack-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := setup(root); err != nil {
		fmt.Fprintf(os.Stderr, "attack suite setup: %v\n", err)
	} else {
		code = m.Run()
	}
	if reg != nil {
		_ = reg.Close()
	}
	_ = os.RemoveAll(root)
	os.Exit(code)
}

func setup(root string) error {
	var err error
	if testdata, err = testregistry.FixturesDir(); err != nil {
		return err
	}
	if bin, err = binary.Build(mkdir(root, "bin"), binary.FailpointsTag); err != nil {
		return err
	}
	if reg, err = testregistry.Start(testregistry.Options{}); err != nil {
		return err
	}
	templates = mkdir(root, "templates")
	scratch = mkdir(root, "rows")
	fresh := filepath.Join(templates, tplFresh)
	if err := cp(filepath.Join(testdata, "microshift-trees", "5.0"), fresh); err != nil {
		return err
	}
	if err := gitSetup(fresh, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	if err := commitAll(fresh, "MicroShift before the storage rebase"); err != nil {
		return err
	}
	rebased := filepath.Join(templates, tplRebased)
	if err := cp(fresh, rebased); err != nil {
		return err
	}
	home := mkdir(root, "home")
	cache := filepath.Join(templates, tplCache)
	res := runProc(proc{args: append(treeArgs(rebased, cache), "--commit"), env: childEnv(home)})
	if res.code != 0 {
		return fmt.Errorf("rebasing the template tree: exit %d\n%s", res.code, res.stderr)
	}
	return makeClone(filepath.Join(templates, tplClone))
}

// makeClone builds a MicroShift-like clone: main (5.0), release-4.22 and release-4.17 from the
// generated trees, HEAD on main, a clean work tree.
func makeClone(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := gitSetup(dir, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	for _, b := range []struct{ branch, tree string }{{"main", "5.0"}, {"release-4.22", "4.22"}, {"release-4.17", "4.17"}} {
		if b.branch != "main" {
			if err := gitSetup(dir, "checkout", "-q", "--orphan", b.branch); err != nil {
				return err
			}
			if err := gitSetup(dir, "rm", "-rfq", "--ignore-unmatch", "."); err != nil {
				return err
			}
		}
		if err := cp(filepath.Join(testdata, "microshift-trees", b.tree)+"/.", dir); err != nil {
			return err
		}
		if err := commitAll(dir, "tree of "+b.branch); err != nil {
			return err
		}
	}
	return gitSetup(dir, "checkout", "-q", "main")
}

func commitAll(dir, msg string) error {
	if err := gitSetup(dir, "add", "-A"); err != nil {
		return err
	}
	return gitSetup(dir, "commit", "-qm", msg)
}

// gitSetup runs git for the suite's own setup, isolated from the developer's configuration,
// with an identity of its own.
func gitSetup(dir string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-c", "user.name=setup", "-c", "user.email=setup@localhost"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// cp copies src to dst as cp -a does: modes, symbolic links and special files kept.
func cp(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %w\n%s", src, dst, err, out)
	}
	return nil
}

func mkdir(parent, name string) string {
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	return dir
}
