package app

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
	"github.com/lvms-rebase/lvms-rebase/rebase/tree"
)

// Canary credentials: none of these strings may appear in any output.
const (
	canaryUser  = "canary-user-7f3"
	canaryPass  = "canary-pass-9d1"
	canaryToken = "canary-token-c4e"
)

// Canaries as people paste them: not percent-encoded, with spaces, quotes, <>, "#", ";"
// and "@" in the user info (raw ends with its "@"), the query, the fragment and path
// parameters.
var (
	raw      = canaryUser + ` "<a>#;@b:` + canaryPass + ` '<c>#;@d@`
	rawQuery = "?token=" + canaryToken + ` "<e>#;@f&x=` + canaryToken
	rawFrag  = "#" + canaryToken + ` "<g>;@h`
	rawParam = ";token=" + canaryToken + `"<i>@j`
)

func hasCanary(s string) bool {
	for _, c := range []string{canaryUser, canaryPass, canaryToken, "canary-"} {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// TestCanaryCredentials drives every input that may carry credentials — --snapshot-assets,
// --mirror, IDMS/ICSP mirrors, --ocp-release*, --lvms-bundle*, a kubeconfig server URL — with
// canary user names, passwords and query tokens, in runs that succeed and runs that fail,
// and greps every output: the tree (lock included), the PR body, the git history of a
// --commit run, stdout and stderr in text and JSON.
func TestCanaryCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	host := e.reg.Host()
	cred := canaryUser + ":" + canaryPass + "@"
	assets := "http://" + cred + host + testregistry.SnapshotArchivePrefix + "{commit}.tar.gz?token=" + canaryToken
	dir := copyTree(t, "../../../testdata/microshift")
	gitInit(t, dir)
	setGitIdentity(t)
	body := filepath.Join(t.TempDir(), "pr.md")
	var outputs strings.Builder
	collect := func(name string, code, want int, out, errOut string) {
		t.Helper()
		outputs.WriteString(out + errOut)
		if code != want {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, code, want, out, errOut)
		}
	}
	// Successful runs with a credentialed snapshot-assets URL: write + commit + PR body, then
	// JSON output and --check in both log formats.
	// The same run with canaries holding spaces, quotes, <>, "#", ";" and "@" in the user info
	// (percent-encoded: the URL must still work), the query and the fragment.
	special := "http://" + url.UserPassword(canaryUser+` "<x>#;@`, canaryPass+` '<y>#;@`).String() + "@" + host +
		testregistry.SnapshotArchivePrefix + "{commit}.tar.gz?token=" + url.QueryEscape(canaryToken+` "<z>#;@`) + "&n=1#" + canaryToken + `-frag "<>;@`
	code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--snapshot-assets", special, "--dry-run", "-o", "json")
	collect("special canaries", code, 0, out, errOut)
	code, out, errOut = e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--snapshot-assets", assets, "--commit", "--pr-body", body)
	collect("write", code, 0, out, errOut)
	code, out, errOut = e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--snapshot-assets", assets, "--dry-run", "-o", "json", "--log-format", "json")
	collect("dry-run json", code, 0, out, errOut)
	code, out, errOut = e.run(dir, "--check", "-o", "json")
	collect("check", code, 0, out, errOut)

	canaryFailures(t, e, cred, assets, collect)
	// apply: a kubeconfig whose server URL carries credentials and a token.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	mustWriteFile(t, kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://`+cred+`127.0.0.1:1/?token=`+canaryToken+`", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: `+canaryToken+`}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600)
	var aout, aerr bytes.Buffer
	acode := Main([]string{"apply", "--kubeconfig", kc, "--assets", filepath.Join(goldenRoot, "4.18", "assets"), "--arch", "x86_64",
		"--volume-groups", "vg1", "--timeout", "3s", "--runtime-lvmd", filepath.Join(t.TempDir(), "lvmd.yaml"), "--lvmd", filepath.Join(t.TempDir(), "none.yaml")},
		IOStreams{In: strings.NewReader(""), Out: &aout, ErrOut: &aerr})
	collect("apply", acode, ExitError, aout.String(), aerr.String())
	for _, server := range []string{"https://" + raw + "127.0.0.1:1/p" + rawParam + rawQuery + rawFrag, "https://127.0.0.1:1/p" + rawParam + rawQuery} {
		q, _ := json.Marshal(server)
		mustWriteFile(t, kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "+string(q)+", insecure-skip-tls-verify: true}}]\n"+
			"users: [{name: u, user: {token: "+canaryToken+"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"), 0o600)
		aout.Reset()
		aerr.Reset()
		acode = Main([]string{"apply", "--kubeconfig", kc, "--assets", filepath.Join(goldenRoot, "4.18", "assets"), "--arch", "x86_64", "--log-format", "json",
			"--volume-groups", "vg1", "--timeout", "3s", "--runtime-lvmd", filepath.Join(t.TempDir(), "lvmd.yaml"), "--lvmd", filepath.Join(t.TempDir(), "none.yaml")},
			IOStreams{In: strings.NewReader(""), Out: &aout, ErrOut: &aerr})
		collect("apply "+server, acode, ExitError, aout.String(), aerr.String())
	}
	err := filepath.WalkDir(e.cache, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if hasCanary(p) || hasCanary(string(b)) {
			t.Errorf("cache file %s carries a credential", p)
		}
		return err
	})
	if err != nil {
		t.Errorf("reading the cache %s: %v", e.cache, err)
	}

	for p, data := range readTree(t, dir) {
		if hasCanary(string(data)) {
			t.Errorf("tree file %s carries a credential:\n%s", p, data)
		}
	}
	if b, _ := os.ReadFile(body); hasCanary(string(b)) || len(b) == 0 {
		t.Errorf("PR body carries a credential (or is empty):\n%s", b)
	}
	if log := gitOut(t, dir, "log", "-p", "--all"); hasCanary(log) {
		t.Errorf("git history carries a credential:\n%s", log)
	}
	if s := outputs.String(); hasCanary(s) {
		for _, line := range strings.Split(s, "\n") {
			if hasCanary(line) {
				t.Errorf("output line carries a credential: %s", line)
			}
		}
	}
	lock, _ := os.ReadFile(filepath.Join(dir, "scripts/auto-rebase/lvms-rebase.lock.yaml"))
	if !strings.Contains(string(lock), "source: http://"+host+testregistry.SnapshotArchivePrefix+"{commit}.tar.gz\n") {
		t.Errorf("lock does not record the stripped source:\n%s", lock)
	}
}

// canaryFailures runs each credential-carrying input in a run that fails (usage errors,
// bad mirrors, unparseable references, a missing archive), in text and JSON.
func canaryFailures(t *testing.T, e *e2e, cred, assets string, collect func(string, int, int, string, string)) {
	host := e.reg.Host()
	idms := filepath.Join(t.TempDir(), "idms.yaml")
	mustWriteFile(t, idms, []byte("kind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n  - source: registry.redhat.io/lvms4\n    mirrors: [\""+cred+host+"/registry.redhat.io/lvms4\"]\n"), 0o644)
	icsp := filepath.Join(t.TempDir(), "icsp.yaml")
	mustWriteFile(t, icsp, []byte("kind: ImageContentSourcePolicy\nspec:\n  repositoryDigestMirrors:\n  - source: quay.io\n    mirrors: [\"https://"+cred+"mirror.local/q?token="+canaryToken+"\"]\n"), 0o644)
	bad := "/registry.redhat.io/lvms4/lvms-operator-bundle:v4.18.0"

	failing := []struct {
		args []string
		code int
	}{
		{[]string{"--snapshot-assets", strings.Replace(assets, "{commit}", "{commit}-missing", 1)}, ExitError},
		{[]string{"--snapshot-assets", "http://" + canaryUser + ":" + canaryPass + "/x@" + host + "/a/{commit}.tar.gz"}, ExitError},
		{[]string{"--mirror", "quay.io=" + cred + host + "/quay.io"}, ExitUsage},
		{[]string{"--mirror", "https://" + cred + "quay.io=" + host + "/quay.io"}, ExitUsage},
		{[]string{"--idms-file", idms}, ExitError},
		{[]string{"--idms-file", icsp}, ExitError},
		{[]string{"--lvms-bundle", cred + host + bad}, ExitUsage},
		{[]string{"--lvms-bundle", "https://" + cred + host + bad + "?token=" + canaryToken}, ExitUsage},
		{[]string{"--lvms-bundle-repo", cred + host + "/registry.redhat.io/lvms4/lvms-operator-bundle"}, ExitUsage},
		{[]string{"--ocp-release", cred + host + "/quay.io/openshift-release-dev/ocp-release:4.18.0-{arch}"}, ExitUsage},
		{[]string{"--ocp-release-x86_64", cred + host + "/q:1", "--ocp-release-aarch64", "docker://" + cred + host + "/q:1"}, ExitUsage},
		{[]string{"--ocp-release-repo", cred + host + "/quay.io/openshift-release-dev/ocp-release"}, ExitUsage},
		{[]string{"--snapshot-assets", "http://" + raw + host + testregistry.SnapshotArchivePrefix + "{commit}.tar.gz" + rawQuery + rawFrag}, ExitError},
		{[]string{"--snapshot-assets", "http://" + host + testregistry.SnapshotArchivePrefix + "x" + rawParam + "/{commit}.tar.gz" + rawQuery}, ExitError},
		{[]string{"--snapshot-assets", "http://" + host + "/raw/{commit}/{path}" + rawParam + rawQuery + rawFrag}, ExitError},
		{[]string{"--snapshot-assets", raw + host + "/no-scheme/{commit}.tar.gz"}, ExitError},
		{[]string{"--snapshot-assets", raw + host + "/not-a-path"}, ExitError},
		{[]string{"--mirror", "quay.io=" + raw + host + "/quay.io"}, ExitUsage},
		{[]string{"--mirror", "quay.io=" + host + "/quay.io" + rawParam + rawQuery + rawFrag}, ExitUsage},
		{[]string{"--insecure-registry", raw + host}, ExitUsage},
		{[]string{"--lvms-bundle", raw + host + bad}, ExitUsage},
		{[]string{"--lvms-bundle", "docker://" + raw + host + bad + rawQuery + rawFrag}, ExitUsage},
		{[]string{"--lvms-bundle", host + bad + rawParam + rawQuery + rawFrag}, ExitUsage},
		{[]string{"--lvms-bundle-repo", raw + host + "/registry.redhat.io/lvms4/lvms-operator-bundle"}, ExitUsage},
		{[]string{"--ocp-release", raw + host + "/quay.io/openshift-release-dev/ocp-release:4.18.0-{arch}" + rawFrag}, ExitUsage},
		{[]string{"--ocp-release-x86_64", host + "/q:1" + rawParam, "--ocp-release-aarch64", "https://" + raw + host + "/q:1" + rawQuery}, ExitUsage},
		{[]string{"--ocp-release-repo", host + "/quay.io/x" + rawQuery}, ExitUsage},
		{[]string{"--idms-file", rawIDMS(t, raw+host+"/registry.redhat.io/lvms4"+rawQuery)}, ExitError},
		{[]string{"--idms-file", rawIDMS(t, host+"/registry.redhat.io/lvms4"+rawParam+rawFrag)}, ExitError},
	}
	for _, f := range failing {
		for _, format := range []string{"text", "json"} {
			code, out, errOut := e.run(t.TempDir(), append([]string{"--ocp", "4.18", "--allow-base-mismatch", "--dry-run", "--log-format", format, "-o", format, "--timeout", "20s"}, f.args...)...)
			collect(strings.Join(f.args, " "), code, f.code, out, errOut)
		}
	}
}

// rawIDMS writes an ImageDigestMirrorSet whose one mirror is m, quoted for YAML.
func rawIDMS(t *testing.T, m string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "idms.yaml")
	q, _ := json.Marshal(m)
	if err := os.WriteFile(p, []byte("kind: ImageDigestMirrorSet\nspec:\n  imageDigestMirrors:\n  - source: registry.redhat.io/lvms4\n    mirrors: ["+string(q)+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func setGitIdentity(t *testing.T) {
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"} {
		t.Setenv(k, v)
	}
}

// TestFailBeforeWriting: --commit without a repository or an identity, an unwritable
// --pr-body and a tree without (parseable) release JSONs fail before any request reaches the
// registry and before the tree is touched.
func TestFailBeforeWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string) []string
		wantErr string
	}{
		{"commit outside git", func(t *testing.T, dir string) []string { return []string{"--commit"} }, "not inside a git work tree"},
		{"commit without identity", func(t *testing.T, dir string) []string {
			gitInit(t, dir)
			t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
				t.Setenv(k, "")
			}
			gitOut(t, dir, "config", "user.useConfigOnly", "true")
			return []string{"--commit"}
		}, "identity"},
		{"pr-body in a missing directory", func(t *testing.T, dir string) []string {
			return []string{"--pr-body", filepath.Join(t.TempDir(), "no", "pr.md")}
		}, "--pr-body"},
		{"pr-body is a directory", func(t *testing.T, dir string) []string { return []string{"--pr-body", t.TempDir()} }, "--pr-body"},
		{"snapshot-assets path missing", func(t *testing.T, dir string) []string {
			return []string{"--snapshot-assets", filepath.Join(t.TempDir(), "no-such-checkout")}
		}, "--snapshot-assets"},
		{"release JSON missing", func(t *testing.T, dir string) []string {
			os.Remove(filepath.Join(dir, "assets/release/release-aarch64.json"))
			return nil
		}, "release-aarch64.json"},
		{"release JSON malformed", func(t *testing.T, dir string) []string {
			mustWriteFile(t, filepath.Join(dir, "assets/release/release-x86_64.json"), []byte(`{"release": {"base": "4.18.0"}, "images": [`), 0o644)
			return nil
		}, "release-x86_64.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, "../../../testdata/microshift")
			args := append([]string{"--ocp", "4.18", "--allow-base-mismatch"}, tc.setup(t, dir)...)
			before := treeHash(t, dir)
			e.reg.ResetStats()
			code, out, errOut := e.run(dir, args...)
			if code != ExitError || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, want 1 with %q\nstdout:\n%s\nstderr:\n%s", code, tc.wantErr, out, errOut)
			}
			if n := e.reg.Stats().Requests("", ""); n != 0 {
				t.Errorf("%d registry requests before failing", n)
			}
			if treeHash(t, dir) != before {
				t.Error("the tree changed")
			}
		})
	}
}

// TestSecondRunRefused: a run on a tree another lvms-rebase holds fails at once naming the
// tree. (A tree left half-written by a killed run: TestKillDuringSwapThenRecover kills a real
// run at swap points; a journal lvms-rebase did not write: TestHandMadeJournalTouchesNothing.)
func TestSecondRunRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	unlock, err := tree.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	code, _, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch")
	unlock()
	if code != ExitError || !strings.Contains(errOut, "another lvms-rebase holds "+dir) {
		t.Fatalf("second run: exit %d\n%s", code, errOut)
	}
	if treeHash(t, dir) != before {
		t.Error("the refused run modified the tree")
	}
}

// TestTimeoutNamesPhaseAndInput: a registry that hangs on the bundle's blobs stops the run at
// --timeout with a message naming the cause, the phase and the input being fetched; the
// tree is untouched.
func TestTimeoutNamesPhaseAndInput(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	e.reg.Inject(testregistry.Fault{Method: "GET", Path: "/blobs/", Kind: testregistry.FaultStall})
	dir := copyTree(t, "../../../testdata/microshift")
	before := treeHash(t, dir)
	code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--timeout", "2s")
	if code != ExitError {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"--timeout 2s exceeded", "in phase resolve", "while fetching the newest inputs for OpenShift 4.18", "registry.redhat.io/lvms4/lvms-operator-bundle"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error lacks %q:\n%s", want, errOut)
		}
	}
	if treeHash(t, dir) != before {
		t.Error("the tree changed")
	}
}

// TestJSONLogsOnly: with --log-format json every stderr line is a JSON record — phase lines,
// warnings, progress and the final error alike.
func TestJSONLogsOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	var stderr strings.Builder
	for _, args := range [][]string{
		{"--ocp", "4.18", "--allow-base-mismatch", "--dry-run"},
		{"--ocp", "4.18", "--allow-base-mismatch", "--snapshot-assets", filepath.Join(t.TempDir(), "missing")},
		{"--ocp", "4.18", "--allow-base-mismatch", "--mirror", "quay.io=Mirror/x"},
		{"--check"},
	} {
		_, _, errOut := e.run(dir, append(args, "--log-format", "json")...)
		stderr.WriteString(errOut)
	}
	var progress bytes.Buffer
	logs := &logFlags{format: "json"}
	log, _ := logs.logger(&progress)
	report := progressFor(logs, &progress, log)
	report(source.Progress{Image: "quay.io/x", Digest: "sha256:ab", Done: 1, Total: 2})
	report(source.Progress{Image: "quay.io/x", Digest: "sha256:ab", Done: 2, Total: 2, Finished: true})
	stderr.WriteString(progress.String())
	lines := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		if line == "" {
			continue
		}
		lines++
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("stderr line is not JSON: %s", line)
		}
	}
	if lines < 10 || !strings.Contains(stderr.String(), `"level":"ERROR"`) || !strings.Contains(stderr.String(), `"msg":"fetching"`) {
		t.Fatalf("expected phase, error and progress records:\n%s", stderr.String())
	}
}

// TestFetchCountersIncludeResolve: on a cold cache the summary and -o json count every blob
// the registry served, resolve included, and the bytes match; a warm run fetches none.
func TestFetchCountersIncludeResolve(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	e := newE2E(t)
	dir := copyTree(t, "../../../testdata/microshift")
	e.reg.ResetStats()
	code, out, errOut := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--dry-run", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var res struct {
		Fetched []source.FetchStats `json:"fetched"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var bytesFetched int64
	blobs := 0
	for _, st := range res.Fetched {
		bytesFetched += st.BytesFetched
		blobs += st.BlobsFetched
	}
	// Served downloads: blobs, and the snapshot-assets files (any GET outside /v2/).
	st := e.reg.Stats()
	wantBlobs, wantBytes := 0, int64(0)
	for _, p := range st.Paths {
		if p.Method == "GET" && (strings.Contains(p.Path, "/blobs/sha256:") || !strings.HasPrefix(p.Path, "/v2/")) {
			wantBlobs += p.Requests
			wantBytes += p.Bytes
		}
	}
	if blobs != wantBlobs || bytesFetched != wantBytes || blobs == 0 {
		t.Errorf("cold run counts %d blobs / %d bytes, the registry served %d / %d:\n%+v\n%+v", blobs, bytesFetched, wantBlobs, wantBytes, res.Fetched, st.Paths)
	}
	_, text, _ := e.run(dir, "--ocp", "4.18", "--allow-base-mismatch", "--dry-run")
	if !strings.Contains(text, "fetched 0 bytes in 0 blobs") {
		t.Errorf("warm run summary:\n%s", text)
	}
}
