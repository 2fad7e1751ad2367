// Command bench is `make bench`: it measures a full two-arch `lvms-rebase --ocp X.Y`
// against a loopback registry shaped like the real inputs — payloads with ~150 MB of
// incompressible filler and a ~2 MB release-manifests layer, an ~11 MB snapshot-controller
// operator archive — behind a network model (a delay per request and a shared bandwidth
// cap, 40 ms and 100 Mbit/s by default). It runs lvms-rebase cold and warm, and a
// legacy-shaped pipeline doing the same job the way the legacy scripts do (the bundle
// pulled once per arch, each payload's whole image, per-arch relatedImage lookups, the whole
// archive, all in sequence, then `kubectl kustomize`), and prints one table plus
// _output/bench/result.json with bytes against the minimal bytes and wall time against the
// critical-path estimate (report.go: DependentRoundTrips). Each run's request timeline, from
// the registry's side, is written next to its log (<minor>/lvms-rebase-cold.timeline): which
// requests overlapped and which waited for another.
//
// It only measures: nothing is compared against a time budget. It fails when a run fails,
// when the cold run writes nothing or the warm run changes the tree, because then the
// numbers would not describe the job.
//
// `bench peer -spec FILE -result FILE` is the legacy-shaped pipeline itself; the bench runs
// it as a child process so that its wall time and peak RSS are measured like lvms-rebase's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/lvms-rebase/lvms-rebase/api/v1alpha1"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "peer":
		err = peerMain(os.Args[2:])
	default:
		err = benchMain(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// options are the bench's flags.
type options struct {
	bin        string
	rusage     string
	out        string
	microshift string
	filler     int64
	ocp        []string
	kubectl    string
	linkMbps   float64
	delay      time.Duration
	// snapshotBytes and manifestsBytes pad the snapshot archive and the release-manifests
	// layer to real sizes (fixtures.Options).
	snapshotBytes  int64
	manifestsBytes int64
	// fleet lists the branch counts of the multi-branch runs (none: skipped).
	fleet []string
}

func parseOptions(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "_output/bin/lvms-rebase", "the lvms-rebase binary to measure")
	fs.StringVar(&o.rusage, "rusage", "_output/bin/bench-rusage", "the measuring wrapper built from hack/bench/rusage")
	fs.StringVar(&o.out, "out", "_output/bench", "directory for result.json, logs and work trees (wiped per minor)")
	fs.StringVar(&o.microshift, "microshift", "testdata/microshift", "MicroShift-like tree copied as the rebase target")
	fs.Int64Var(&o.filler, "filler", 150<<20, "incompressible filler bytes per payload image")
	ocp := fs.String("ocp", "4.18,4.17", "comma-separated OpenShift minors to rebase onto, one bench each")
	fleet := fs.String("fleet", "2,4", "branch counts of the multi-branch runs (branches round-robin over -ocp), \"\" to skip")
	fs.StringVar(&o.kubectl, "kubectl", "", `kubectl for the legacy-shaped pipeline (default: from PATH; "none" skips kubectl kustomize)`)
	fs.Float64Var(&o.linkMbps, "link-mbps", 100, "network model: the registry's bandwidth, shared by all responses (0: unlimited)")
	fs.DurationVar(&o.delay, "delay", 40*time.Millisecond, "network model: the delay before every response (0: none)")
	fs.Int64Var(&o.snapshotBytes, "snapshot-archive-bytes", 11400<<10, "padding of the snapshot-controller operator archive (real: 11-12 MB)")
	fs.Int64Var(&o.manifestsBytes, "release-manifests-bytes", 2<<20, "padding of each payload's release-manifests layer (real: ~2 MB)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.ocp = splitList(*ocp)
	o.fleet = splitList(*fleet)
	if len(o.ocp) == 0 {
		return nil, errors.New("-ocp: expected at least one minor, e.g. 4.18")
	}
	for _, v := range o.ocp {
		if _, err := era.For(v); err != nil {
			return nil, fmt.Errorf("-ocp %s: %w", v, err)
		}
	}
	for _, f := range []struct {
		name string
		n    int64
	}{{"-filler", o.filler}, {"-snapshot-archive-bytes", o.snapshotBytes}, {"-release-manifests-bytes", o.manifestsBytes}} {
		if f.n < 0 {
			return nil, fmt.Errorf("%s %d: expected a byte count >= 0", f.name, f.n)
		}
	}
	if o.delay < 0 || o.linkMbps < 0 {
		return nil, fmt.Errorf("-delay %s, -link-mbps %g: expected values >= 0", o.delay, o.linkMbps)
	}
	switch o.kubectl {
	case "none":
		o.kubectl = ""
	case "":
		if p, err := exec.LookPath("kubectl"); err == nil {
			o.kubectl = p
		}
	}
	for _, p := range []*string{&o.bin, &o.rusage, &o.out, &o.microshift} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	if st, err := os.Stat(o.bin); err != nil || st.IsDir() {
		return nil, fmt.Errorf("-bin %s: expected the lvms-rebase binary (make build)", o.bin)
	}
	if st, err := os.Stat(o.rusage); err != nil || st.IsDir() {
		return nil, fmt.Errorf("-rusage %s: expected the wrapper binary (go build -o %s ./hack/bench/rusage)", o.rusage, o.rusage)
	}
	return o, nil
}

// splitList splits a comma-separated flag value, dropping blanks and duplicates.
func splitList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// fixtureMinors are the bundle and payload minors the rebases of ocps need.
func fixtureMinors(ocps []string) ([]string, error) {
	var all []string
	for _, v := range ocps {
		e, err := era.For(v)
		if err != nil {
			return nil, err
		}
		all = append(all, v, e.LVMSMinor)
	}
	return splitList(strings.Join(all, ",")), nil
}

func benchMain(args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}

	rep := &Report{
		Go:           runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:         runtime.NumCPU(),
		FillerBytes:  o.filler,
		Kubectl:      kubectlVersion(ctx, o.kubectl),
		LinkMbps:     o.linkMbps,
		DelaySeconds: o.delay.Seconds(),
		Binary:       binaryVersion(ctx, o.bin),
	}
	minors, err := fixtureMinors(o.ocp)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: building fixtures for %s with %s of filler per payload\n", strings.Join(minors, ", "), humanBytes(o.filler))
	start := time.Now()
	set, err := fixtures.Build(fixtures.Options{FillerBytes: o.filler, Minors: minors,
		SnapshotArchiveBytes: o.snapshotBytes, ReleaseManifestsBytes: o.manifestsBytes})
	if err != nil {
		return fmt.Errorf("building fixtures: %w", err)
	}
	rep.BuildSeconds = time.Since(start).Seconds()

	// Pushing the padded set re-points the payload tags at the big images; its real-size
	// archives replace the committed ones for the same commits.
	reg, err := testregistry.Start(testregistry.Options{})
	if err != nil {
		return fmt.Errorf("starting the loopback registry: %w", err)
	}
	defer reg.Close()
	start = time.Now()
	if err := set.Push(ctx, reg.Host()); err != nil {
		return fmt.Errorf("pushing fixtures to %s: %w", reg.Host(), err)
	}
	rep.PushSeconds = time.Since(start).Seconds()
	// The set is the registry's fixtures, its unsigned noise .sig tag included: signed as
	// the seeded fixtures are, not served as a test's forged push would be.
	reg.AdoptPushes()
	for _, a := range set.SnapshotAssets {
		reg.AddSnapshotArchive(a.Commit, a.Tarball)
	}
	fmt.Fprintf(os.Stderr, "bench: registry %s ready (build %s, push %s)\n", reg.Host(), seconds(rep.BuildSeconds), seconds(rep.PushSeconds))

	for _, v := range o.ocp {
		mr, err := benchMinor(ctx, o, reg, v)
		if err != nil {
			return fmt.Errorf("--ocp %s: %w", v, err)
		}
		rep.Minors = append(rep.Minors, *mr)
	}

	for _, n := range o.fleet {
		var count int
		if _, err := fmt.Sscan(n, &count); err != nil || count < 1 {
			return fmt.Errorf("-fleet %s: expected branch counts, e.g. 2,4", n)
		}
		fr, err := benchFleet(ctx, o, reg, count)
		if err != nil {
			return fmt.Errorf("%d-branch run: %w", count, err)
		}
		rep.Fleets = append(rep.Fleets, *fr)
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	resultPath := filepath.Join(o.out, "result.json")
	if err := os.WriteFile(resultPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nresult: %s\n", resultPath)
	return nil
}

// rebaseOutput is the part of `lvms-rebase -o json` the bench reads.
type rebaseOutput struct {
	PayloadVersion string `json:"payloadVersion"`
	BundleVersion  string `json:"bundleVersion"`
	Plan           *struct {
		Add       []string `json:"add"`
		Change    []string `json:"change"`
		Remove    []string `json:"remove"`
		Unchanged []string `json:"unchanged"`
	} `json:"plan"`
	Phases []v1alpha1.Phase `json:"phases"`
}

func parseRebaseOutput(data []byte) (*rebaseOutput, error) {
	var out rebaseOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("lvms-rebase -o json: %w", err)
	}
	if out.Plan == nil {
		return nil, errors.New("lvms-rebase -o json: no plan in the result")
	}
	return &out, nil
}

func (r *rebaseOutput) changed() int {
	return len(r.Plan.Add) + len(r.Plan.Change) + len(r.Plan.Remove)
}

func (r *rebaseOutput) phases() []PhaseTime {
	out := make([]PhaseTime, 0, len(r.Phases))
	for _, p := range r.Phases {
		out = append(out, PhaseTime{Name: p.Name, Seconds: p.Duration.Seconds()})
	}
	return out
}

func benchMinor(ctx context.Context, o *options, reg *testregistry.Registry, ocp string) (*MinorResult, error) {
	dir := filepath.Join(o.out, ocp)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	tree := filepath.Join(dir, "microshift")
	if err := copyTree(o.microshift, tree); err != nil {
		return nil, err
	}
	mr := &MinorResult{OCP: ocp}
	reg.SetNetwork(o.network())
	if err := runRebases(ctx, o, reg, dir, tree, mr); err != nil {
		return nil, err
	}
	lk, err := lock.Read(filepath.Join(tree, filepath.FromSlash(lock.Path)))
	if err != nil {
		return nil, err
	}
	mr.Files = len(lk.Files)
	if err := runLegacy(ctx, o, reg, dir, tree, lk, mr); err != nil {
		return nil, err
	}
	// Measured after the runs, at loopback speed, so its own requests never reach the
	// counters above.
	reg.SetNetwork(testregistry.Network{})
	if mr.Minimal, err = minimalBytes(ctx, reg.Host(), lk); err != nil {
		return nil, fmt.Errorf("computing the minimal bytes: %w", err)
	}
	mr.computeRatios(o.delay.Seconds(), o.linkMbps)
	return mr, nil
}

// network is the model the runs are measured under.
func (o *options) network() testregistry.Network {
	return testregistry.Network{Delay: o.delay, BytesPerSecond: int64(o.linkMbps * 1e6 / 8)}
}

// runRebases runs lvms-rebase cold then warm on tree and records both in mr.
func runRebases(ctx context.Context, o *options, reg *testregistry.Registry, dir, tree string, mr *MinorResult) error {
	// An empty credentials file keeps whatever the user has in ~/.docker or the pull
	// secret out of the measurement.
	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"auths":{}}`+"\n"), 0o600); err != nil {
		return err
	}
	// The snapshot files come from their default (raw.githubusercontent.com) URLs through the
	// registry's mirror flags; github.com is mirrored too, for binaries or locks that read
	// the archive.
	args := append([]string{
		"--ocp", mr.OCP, "--allow-base-mismatch", // testdata/microshift is a 4.16 tree
		"--microshift-dir", tree,
		"--cache-dir", filepath.Join(dir, "cache"),
		"--authfile", authFile,
		"--insecure-registry", reg.Host(),
		"--mirror", "github.com=" + reg.Host() + "/github.com",
		"-o", "json",
	}, append(reg.MirrorFlags(), reg.SignatureFlags()...)...)
	var cold, warm *rebaseOutput
	for _, run := range []struct {
		name string
		m    *Measurement
		out  **rebaseOutput
	}{{"cold", &mr.Cold, &cold}, {"warm", &mr.Warm, &warm}} {
		fmt.Fprintf(os.Stderr, "bench: --ocp %s: lvms-rebase %s\n", mr.OCP, run.name)
		stdout := filepath.Join(dir, "lvms-rebase-"+run.name+".json")
		reg.ResetStats()
		m, err := runChild(ctx, o.rusage, o.bin, args, stdout, filepath.Join(dir, "lvms-rebase-"+run.name+".log"))
		if err != nil {
			return err
		}
		m.Name = "lvms-rebase " + run.name
		addStats(&m, reg.Stats())
		if err := writeTimeline(filepath.Join(dir, "lvms-rebase-"+run.name+".timeline"), reg.Timeline()); err != nil {
			return err
		}
		data, err := os.ReadFile(stdout)
		if err != nil {
			return err
		}
		if *run.out, err = parseRebaseOutput(data); err != nil {
			return fmt.Errorf("%s run (%s): %w", run.name, stdout, err)
		}
		m.Phases = (*run.out).phases()
		*run.m = m
	}
	if cold.changed() == 0 {
		return fmt.Errorf("the cold run wrote nothing into %s; a fresh tree must change", tree)
	}
	if n := warm.changed(); n != 0 {
		return fmt.Errorf("the warm run changed %d files in %s; it must report no changes", n, tree)
	}
	// Every digest is verified: a cold run that asked for no signature verified nothing, and
	// a warm run answers every signature from the cache.
	if mr.Cold.SignatureRequests == 0 {
		return fmt.Errorf("the cold run asked for no signature in %s; every digest it writes must be verified", tree)
	}
	if n := mr.Warm.SignatureRequests; n != 0 {
		return fmt.Errorf("the warm run sent %d signature requests in %s; the cache must answer them", n, tree)
	}
	mr.PayloadVersion, mr.Bundle = cold.PayloadVersion, cold.BundleVersion
	return nil
}

// runLegacy runs the legacy-shaped pipeline on the inputs the lock recorded.
func runLegacy(ctx context.Context, o *options, reg *testregistry.Registry, dir, tree string, lk *lock.Lock, mr *MinorResult) error {
	spec := peerSpec{
		OCP:           mr.OCP,
		Bundle:        mirrorRef(reg.Host(), source.Repository(lk.Bundle.Ref)+"@"+lk.Bundle.Digest),
		BundleVersion: lk.Bundle.Version,
		SnapshotURL:   reg.SnapshotAssetsURL(),
		Work:          filepath.Join(dir, "legacy"),
		Kubectl:       o.kubectl,
	}
	for _, p := range lk.Payloads {
		spec.Payloads = append(spec.Payloads, peerPayload{Arch: p.Arch, Ref: mirrorRef(reg.Host(), source.Repository(p.Ref)+"@"+p.Digest)})
	}
	for _, im := range lk.Images {
		if im.From == "bundle" {
			spec.RelatedImages = append(spec.RelatedImages, mirrorRef(reg.Host(), relatedRef(im)))
		}
	}
	specPath := filepath.Join(dir, "legacy-spec.json")
	resultPath := filepath.Join(dir, "legacy-result.json")
	if err := writeJSON(specPath, spec); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: --ocp %s: legacy-shaped pipeline (per-arch bundle, whole payloads, whole archive, kubectl kustomize)\n", mr.OCP)
	reg.ResetStats()
	m, err := runChild(ctx, o.rusage, self, []string{"peer", "-spec", specPath, "-result", resultPath},
		filepath.Join(dir, "legacy.out"), filepath.Join(dir, "legacy.log"))
	if err != nil {
		return err
	}
	addStats(&m, reg.Stats())
	m.Name = "legacy-shaped"
	var pr peerResult
	data, err := os.ReadFile(resultPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &pr); err != nil {
		return fmt.Errorf("%s: %w", resultPath, err)
	}
	m.Phases = pr.Phases
	if o.kubectl == "" {
		m.Name = "legacy (no kubectl)"
		mr.Notes = append(mr.Notes, "no kubectl (not on PATH, or -kubectl none): the legacy-shaped pipeline's kustomize step did not run")
	}
	mr.Legacy = m
	mr.LegacyObjects = pr.Objects
	if ours := countYAML(tree); o.kubectl != "" && pr.Objects != ours {
		mr.Notes = append(mr.Notes, fmt.Sprintf("kubectl kustomize rendered %d objects, lvms-rebase wrote %d component files", pr.Objects, ours))
	}
	// The exported filesystem tars are only there to be written; drop them now.
	return os.RemoveAll(filepath.Join(spec.Work, "export"))
}

// binaryVersion is the first line of `BIN version`, naming the build measured.
func binaryVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return filepath.Base(bin)
	}
	return filepath.Base(bin) + " " + strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// runChild runs name with args, stdout and stderr going to files, and measures it.
//
// The command runs under the rusage wrapper (hack/bench/rusage) rather than straight from
// here: Go starts children with vfork semantics, and Linux carries the parent's RSS
// high-water mark over the exec into the child's ru_maxrss, so a direct child of this
// process (which holds the fixture set) would report at least this process's RSS. The
// wrapper's own few MiB are the floor instead.
func runChild(ctx context.Context, rusage, name string, args []string, stdoutPath, stderrPath string) (Measurement, error) {
	stdout, err := os.Create(stdoutPath)
	if err != nil {
		return Measurement{}, err
	}
	defer stdout.Close()
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return Measurement{}, err
	}
	defer stderr.Close()
	usagePath := stderrPath + ".rusage.json"
	cmd := exec.CommandContext(ctx, rusage, append([]string{"-o", usagePath, "--", name}, args...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return Measurement{}, fmt.Errorf("%s %s: %w (log: %s)%s", filepath.Base(name), strings.Join(args, " "), err, stderrPath, tail(stderrPath))
	}
	var u usage
	data, err := os.ReadFile(usagePath)
	if err != nil {
		return Measurement{}, err
	}
	if err := json.Unmarshal(data, &u); err != nil {
		return Measurement{}, fmt.Errorf("%s: %w", usagePath, err)
	}
	return Measurement{WallSeconds: u.WallSeconds, PeakRSSKiB: u.PeakRSSKiB, CPUSeconds: u.CPUSeconds}, nil
}

// usage is what hack/bench/rusage measured (its Usage type).
type usage struct {
	WallSeconds float64 `json:"wallSeconds"`
	PeakRSSKiB  int64   `json:"peakRSSKiB"`
	CPUSeconds  float64 `json:"cpuSeconds"`
}

// tail returns the last lines of a log for an error message.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "\n  " + strings.Join(lines, "\n  ")
}

func addStats(m *Measurement, s testregistry.Stats) {
	m.BytesByKind = bytesByKind(s)
	m.BytesFetched = s.Bytes()
	m.Requests = s.Requests("", "")
	m.BlobGETs = s.BlobGETs()
	m.ManifestGETs = s.ManifestGETs()
	m.SignatureRequests = s.Requests("", "/signature-") + s.Requests("", ".sig")
}

// bytesByKind splits the bytes served by what was asked for, in a fixed kind order.
func bytesByKind(s testregistry.Stats) []Part {
	sums := map[string]int64{}
	for _, p := range s.Paths {
		kind := "other"
		switch {
		case strings.HasPrefix(p.Path, testregistry.SnapshotArchivePrefix):
			kind = "snapshot archives"
		case strings.HasPrefix(p.Path, testregistry.RawFilePrefix):
			kind = "snapshot files"
		case strings.Contains(p.Path, "/signature-") || strings.HasSuffix(p.Path, ".sig"):
			kind = "signatures"
		case strings.HasSuffix(p.Path, "/tags/list"):
			kind = "tag lists"
		case strings.Contains(p.Path, "/manifests/"):
			kind = "manifests"
		case strings.Contains(p.Path, "/blobs/"):
			kind = "blobs"
		}
		sums[kind] += p.Bytes
	}
	out := make([]Part, 0, len(sums))
	for _, k := range []string{"blobs", "manifests", "tag lists", "snapshot archives", "snapshot files", "signatures", "other"} {
		if n, ok := sums[k]; ok {
			out = append(out, Part{Name: k, Bytes: n})
		}
	}
	return out
}

// kubectlVersion is the first line of `kubectl version --client`, or "absent".
func kubectlVersion(ctx context.Context, kubectl string) string {
	if kubectl == "" {
		return "absent"
	}
	out, err := exec.CommandContext(ctx, kubectl, "version", "--client").Output()
	if err != nil {
		return kubectl + " (version unknown)"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// countYAML counts the files lvms-rebase wrote into the two component directories.
func countYAML(tree string) int {
	n := 0
	for _, d := range []string{"assets/components/lvms", "assets/components/csi-snapshot-controller"} {
		ents, _ := os.ReadDir(filepath.Join(tree, filepath.FromSlash(d)))
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") {
				n++
			}
		}
	}
	return n
}

// writeTimeline writes the registry's request timeline of one run: which requests
// overlapped and which waited for another.
func writeTimeline(path string, events []testregistry.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := testregistry.WriteTimeline(f, events); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("copying %s: %s is not a regular file", src, p)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
