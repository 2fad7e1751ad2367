package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/git"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// FleetResult compares one multi-branch run (`lvms-rebase --branches …`) with cold single
// runs of the same branch trees, under the same network model and fresh caches: the
// N-branch run should cost about the slowest branch plus the bytes no other branch shares,
// not N cold runs.
type FleetResult struct {
	Branches []string      `json:"branches"`
	Minors   []string      `json:"minors"`
	Singles  []Measurement `json:"singles"`
	Fleet    Measurement   `json:"fleet"`
	// SlowestSingleSeconds and SumSingleSeconds/SumSingleBytes are the single runs' figures.
	SlowestSingleSeconds float64 `json:"slowestSingleSeconds"`
	SumSingleSeconds     float64 `json:"sumSingleSeconds"`
	SumSingleBytes       int64   `json:"sumSingleBytes"`
	// DistinctMinorBytes is what the single runs of one branch per distinct minor fetched:
	// the bytes the branches do not share.
	DistinctMinorBytes int64 `json:"distinctMinorBytes"`
}

var baseRE = regexp.MustCompile(`"base": "[^"]*"`)

// fleetBranches names n branches over the bench's minors, round-robin (b1 → the first
// minor, b2 → the second, …), so four branches on two minors share inputs pairwise.
func fleetBranches(minors []string, n int) (names, of []string) {
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("bench-%d", i+1))
		of = append(of, minors[i%len(minors)])
	}
	return names, of
}

// makeBenchClone builds a git clone whose branch bench-i is o.microshift with release.base
// set to GA X.Y.0 of its minor (the rebase then takes the newest payload of that minor).
func makeBenchClone(ctx context.Context, dir, microshift string, names, minors []string) error {
	run := func(args ...string) error {
		_, err := git.Run(ctx, dir, append([]string{"-c", "user.name=bench", "-c", "user.email=bench@localhost"}, args...)...)
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := run("init", "-q", "-b", "bench-base"); err != nil {
		return err
	}
	if err := run("commit", "-q", "--allow-empty", "-m", "base"); err != nil {
		return err
	}
	for i, b := range names {
		if err := run("checkout", "-q", "--orphan", b); err != nil {
			return err
		}
		if err := run("rm", "-rfq", "--ignore-unmatch", "."); err != nil {
			return err
		}
		if err := copyTree(microshift, dir); err != nil {
			return err
		}
		for _, a := range []string{"x86_64", "aarch64"} {
			p := filepath.Join(dir, filepath.FromSlash(releasefile.RepoPath(a)))
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			data = baseRE.ReplaceAll(data, []byte(`"base": "`+minors[i]+`.0"`))
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
		if err := run("add", "-A"); err != nil {
			return err
		}
		if err := run("commit", "-q", "-m", "tree of "+b); err != nil {
			return err
		}
	}
	return run("checkout", "-q", "bench-base")
}

// benchFleet measures a two- and a four-branch run against single runs of each branch.
func benchFleet(ctx context.Context, o *options, reg *testregistry.Registry, n int) (*FleetResult, error) {
	dir := filepath.Join(o.out, fmt.Sprintf("fleet-%d", n))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	names, minors := fleetBranches(o.ocp, n)
	clone := filepath.Join(dir, "clone")
	if err := makeBenchClone(ctx, clone, o.microshift, names, minors); err != nil {
		return nil, err
	}
	fr := &FleetResult{Branches: names, Minors: minors}
	reg.SetNetwork(o.network())
	seen := map[string]bool{}
	for i, b := range names {
		m, err := benchRun(ctx, o, reg, dir, "single-"+b, []string{"--branches", b, "--microshift-dir", clone})
		if err != nil {
			return nil, err
		}
		fr.Singles = append(fr.Singles, m)
		fr.SumSingleSeconds += m.WallSeconds
		fr.SumSingleBytes += m.BytesFetched
		fr.SlowestSingleSeconds = max(fr.SlowestSingleSeconds, m.WallSeconds)
		if !seen[minors[i]] {
			seen[minors[i]] = true
			fr.DistinctMinorBytes += m.BytesFetched
		}
	}
	m, err := benchRun(ctx, o, reg, dir, "fleet", []string{"--branches", strings.Join(names, ","), "--microshift-dir", clone})
	if err != nil {
		return nil, err
	}
	fr.Fleet = m
	return fr, nil
}

// benchRun runs lvms-rebase once with a fresh cache and records wall time and registry bytes.
func benchRun(ctx context.Context, o *options, reg *testregistry.Registry, dir, name string, extra []string) (Measurement, error) {
	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"auths":{}}`+"\n"), 0o600); err != nil {
		return Measurement{}, err
	}
	args := append(append([]string{"--cache-dir", filepath.Join(dir, "cache-"+name), "--authfile", authFile,
		"--insecure-registry", reg.Host(), "--mirror", "github.com=" + reg.Host() + "/github.com", "-o", "json"},
		append(reg.MirrorFlags(), reg.SignatureFlags()...)...), extra...)
	fmt.Fprintf(os.Stderr, "bench: %s\n", name)
	reg.ResetStats()
	m, err := runChild(ctx, o.rusage, o.bin, args, filepath.Join(dir, name+".json"), filepath.Join(dir, name+".log"))
	if err != nil {
		return Measurement{}, err
	}
	m.Name = name
	addStats(&m, reg.Stats())
	return m, nil
}

func (f *FleetResult) writeTable(b *strings.Builder) error {
	fmt.Fprintf(b, "\n%d branches (%s on %s), each in its own worktree, one process and cache\n",
		len(f.Branches), strings.Join(f.Branches, ", "), strings.Join(f.Minors, ", "))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\twall\tfetched\trequests\tpeak RSS\t")
	for _, x := range append(append([]Measurement{}, f.Singles...), f.Fleet) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", x.Name, seconds(x.WallSeconds), humanBytes(x.BytesFetched), x.Requests, humanBytes(x.PeakRSSKiB*1024))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(b, "fleet wall %s vs slowest single %s (%s) vs %d cold runs %s (%s); fleet bytes %s vs distinct minors %s (%s) vs all singles %s\n",
		seconds(f.Fleet.WallSeconds), seconds(f.SlowestSingleSeconds), times(ratio(f.Fleet.WallSeconds, f.SlowestSingleSeconds)),
		len(f.Singles), seconds(f.SumSingleSeconds), times(ratio(f.Fleet.WallSeconds, f.SumSingleSeconds)),
		humanBytes(f.Fleet.BytesFetched), humanBytes(f.DistinctMinorBytes), times(ratio(float64(f.Fleet.BytesFetched), float64(f.DistinctMinorBytes))),
		humanBytes(f.SumSingleBytes))
	return nil
}
