package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

const commit = "0123456789abcdef0123456789abcdef01234567"

// entry is one tar member for tarball fixtures.
type entry struct {
	name     string
	typeflag byte
	data     []byte
	linkname string
}

func treeEntries(t testing.TB, tree, prefix string) []entry {
	t.Helper()
	root := filepath.Join("testdata", "trees", tree)
	var out []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." {
				out = append(out, entry{name: prefix + rel + "/", typeflag: tar.TypeDir})
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, entry{name: prefix + rel, typeflag: tar.TypeReg, data: data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tarball(t testing.TB, gz bool, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	// GitHub archives start with a pax global header carrying the commit.
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": commit}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typeflag, Mode: 0o644, Size: int64(len(e.data)), Linkname: e.linkname}
		if e.typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typeflag == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func bytesFetch(data []byte, gotURL *string) FetchFunc {
	return func(_ context.Context, url string) (io.ReadCloser, error) {
		*gotURL = url
		return io.NopCloser(bytes.NewReader(data)), nil
	}
}

func TestLoadSources(t *testing.T) {
	want := "assets/csi_controller_deployment.yaml assets/csi_controller_deployment_pdb.yaml assets/rbac/webhook_clusterrole.yaml " +
		"assets/rbac/webhook_clusterrolebinding.yaml assets/serviceaccount.yaml assets/volumegroupsnapshotclasses.yaml assets/volumesnapshotclasses.yaml assets/volumesnapshotcontents.yaml assets/volumesnapshots.yaml " +
		"assets/webhook_config.yaml assets/webhook_deployment.yaml assets/webhook_service.yaml assets/webhook_serviceaccount.yaml " +
		"manifests/05_operand_rbac.yaml"
	top := "cluster-csi-snapshot-controller-operator-" + commit + "/"
	dirTar := filepath.Join(t.TempDir(), "ops.tar")
	if err := os.WriteFile(dirTar, tarball(t, false, treeEntries(t, "release-4.17", "./")), 0o644); err != nil {
		t.Fatal(err)
	}
	gzTar := filepath.Join(t.TempDir(), "ops.tar.gz")
	if err := os.WriteFile(gzTar, tarball(t, true, treeEntries(t, "release-4.17", top)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, source, wantURL string
		fetched               []byte
	}{
		{name: "directory", source: filepath.Join("testdata", "trees", "release-4.17")},
		{name: "plain tarball with ./ names", source: dirTar},
		{name: "gzipped tarball with top dir", source: gzTar},
		{name: "archive URL", source: ArchiveSource, fetched: tarball(t, true, treeEntries(t, "release-4.17", top)),
			wantURL: "https://github.com/openshift/cluster-csi-snapshot-controller-operator/archive/" + commit + ".tar.gz"},
		{name: "URL template", source: "http://127.0.0.1:1/github.com/openshift/cluster-csi-snapshot-controller-operator/archive/{commit}.tar.gz",
			fetched: tarball(t, true, treeEntries(t, "release-4.17", top)),
			wantURL: "http://127.0.0.1:1/github.com/openshift/cluster-csi-snapshot-controller-operator/archive/" + commit + ".tar.gz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			a, err := Load(context.Background(), tc.source, commit, bytesFetch(tc.fetched, &got))
			if err != nil {
				t.Fatal(err)
			}
			if p := strings.Join(a.Paths(), " "); p != want {
				t.Errorf("paths:\n got %s\nwant %s", p, want)
			}
			if got != tc.wantURL {
				t.Errorf("fetched %q, want %q", got, tc.wantURL)
			}
			if a.Commit != commit {
				t.Errorf("commit %q", a.Commit)
			}
			if tc.wantURL != "" && a.Source != tc.wantURL {
				t.Errorf("source %q, want %q", a.Source, tc.wantURL)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	top := "cluster-csi-snapshot-controller-operator-" + commit + "/"
	good := treeEntries(t, "release-4.17", top)
	without := func(name string) []entry {
		var out []entry
		for _, e := range good {
			if !strings.HasSuffix(e.name, name) {
				out = append(out, e)
			}
		}
		return out
	}
	tests := []struct {
		name    string
		source  string
		commit  string
		data    []byte
		fetchEr error
		want    []string
	}{
		{name: "bad commit", commit: "main", want: []string{`commit "main": expected a 7-64 character hex commit id`}},
		{name: "traversal", data: tarball(t, true, append(good, entry{name: top + "../evil", typeflag: tar.TypeReg, data: []byte("x")})),
			want: []string{`tar entry "` + top + `../evil": path escapes the archive`, commit}},
		{name: "oversized file", data: tarball(t, false, append(good, entry{name: top + "assets/huge.yaml", typeflag: tar.TypeReg, data: make([]byte, MaxFileBytes+1)})),
			want: []string{"assets/huge.yaml", "exceeds the 2097152-byte limit"}},
		{name: "missing deployment and rbac", data: tarball(t, true, without("csi_controller_deployment.yaml")[:3]),
			want: []string{"missing assets/csi_controller_deployment.yaml, manifests/05_operand_rbac.yaml", commit}},
		{name: "symlink is not followed", data: tarball(t, true, append(without("05_operand_rbac.yaml"),
			entry{name: top + "manifests/05_operand_rbac.yaml", typeflag: tar.TypeSymlink, linkname: "/etc/passwd"})),
			want: []string{"missing manifests/05_operand_rbac.yaml"}},
		{name: "not a tarball", data: []byte("<html>rate limited</html>"), want: []string{"reading tarball"}},
		{name: "fetch fails", source: ArchiveSource, fetchEr: errors.New("HTTP 404"), want: []string{"fetching https://github.com/openshift/cluster-csi-snapshot-controller-operator/archive/" + commit + ".tar.gz: HTTP 404"}},
		{name: "missing local source", source: filepath.Join("testdata", "nope"), want: []string{"testdata/nope", "expected a URL with {commit}, a directory or a tarball"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.commit
			if c == "" {
				c = commit
			}
			fetch := func(_ context.Context, url string) (io.ReadCloser, error) {
				if tc.fetchEr != nil {
					return nil, tc.fetchEr
				}
				return io.NopCloser(bytes.NewReader(tc.data)), nil
			}
			src := tc.source
			if src == "" {
				src = ArchiveSource // these cases are about reading a tarball
			}
			_, err := Load(context.Background(), src, c, fetch)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := Load(context.Background(), "", commit, nil); err == nil || !strings.Contains(err.Error(), "no fetch function") {
		t.Errorf("nil fetch: %v", err)
	}
}

func loadTree(t testing.TB, tree string) *Assets {
	t.Helper()
	a, err := Load(context.Background(), filepath.Join("testdata", "trees", tree), commit, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// overlaid builds the era's snapshot overlay on the translated objects: what MicroShift ships.
func overlaid(r *Result, e era.Era) (*render.Part, error) {
	return render.RenderPart(render.Input{Era: e, Kustomize: lvmsrebase.Kustomize, Snapshot: r.Objects}, render.SnapshotPart)
}

// shipped is the overlay's output for each translated object, in translation order.
func shipped(t testing.TB, r *Result, e era.Era) []*unstructured.Unstructured {
	t.Helper()
	part, err := overlaid(r, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(part.Files) != len(r.Objects) {
		t.Fatalf("the overlay made %d objects of %d", len(part.Files), len(r.Objects))
	}
	out := make([]*unstructured.Unstructured, len(r.Objects))
	for i, o := range r.Objects {
		for _, f := range part.Files {
			if f.Kind == o.GetKind() && f.Name == o.GetName() {
				m := map[string]interface{}{}
				if err := yaml.Unmarshal(f.Data, &m); err != nil {
					t.Fatal(err)
				}
				out[i] = &unstructured.Unstructured{Object: jsonvalue.Normalize(m).(map[string]interface{})}
			}
		}
		if out[i] == nil {
			t.Fatalf("the overlay lost %s %s", o.GetKind(), o.GetName())
		}
	}
	return out
}

// renderResult prints the shipped objects with their files and sources (the golden format,
// unchanged since the objects were patched in Go: the overlay must give the same bytes).
func renderResult(t testing.TB, r *Result, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# commit %s; skipped: %s\n", r.Commit, strings.Join(r.Skipped, ", "))
	for i, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&buf, "---\n# %s (from %s)\n", r.Origins[i].File, r.Origins[i].Source)
		buf.Write(data)
	}
	return buf.Bytes()
}

// TestTranslateGolden: every era's translation of both operator shapes, through the era's
// overlay, gives the golden objects (written when the changes were Go patches; a change of
// a golden file is a change of what MicroShift ships).
func TestTranslateGolden(t *testing.T) {
	for _, tree := range []string{"release-4.17", "main"} {
		for _, e := range era.Table() {
			name := e.Name + "-" + tree
			t.Run(name, func(t *testing.T) {
				r, err := Translate(loadTree(t, tree), e)
				if err != nil {
					t.Fatal(err)
				}
				objs := shipped(t, r, e)
				checkResult(t, r, objs, e)
				got := renderResult(t, r, objs)
				path := filepath.Join("testdata", "golden", name+".yaml")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs (run go test -update and review):\n%s", path, got)
				}
			})
		}
	}
}

// checkResult asserts MicroShift's changes hold on every shipped object.
func checkResult(t *testing.T, r *Result, objs []*unstructured.Unstructured, e era.Era) {
	t.Helper()
	var files []string
	if len(r.Origins) != len(r.Objects) {
		t.Fatalf("%d origins for %d objects", len(r.Origins), len(r.Objects))
	}
	for i, u := range objs {
		o := struct {
			File   string
			Object *unstructured.Unstructured
		}{r.Origins[i].File, u}
		files = append(files, o.File)
		obj := o.Object.Object
		data, _ := yaml.Marshal(obj)
		if strings.Contains(string(data), "${") || strings.Contains(string(data), "openshift-cluster-storage-operator\n") && o.Object.GetKind() != "Deployment" {
			t.Errorf("%s keeps an upstream placeholder or namespace:\n%s", o.File, data)
		}
		if ns := o.Object.GetNamespace(); ns != "" && ns != e.SnapshotNamespace {
			t.Errorf("%s namespace %s", o.File, ns)
		}
		if subs, ok := obj["subjects"].([]interface{}); ok {
			for _, s := range subs {
				if ns := s.(map[string]interface{})["namespace"]; ns != e.SnapshotNamespace {
					t.Errorf("%s subject namespace %v", o.File, ns)
				}
			}
		}
		if o.Object.GetKind() != "Deployment" {
			continue
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "template", "spec", "priorityClassName"); found {
			t.Errorf("%s keeps priorityClassName", o.File)
		}
		containers, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
		for _, c := range containers {
			cm := c.(map[string]interface{})
			if _, found, _ := unstructured.NestedFieldNoCopy(cm, "securityContext", "seccompProfile"); found {
				t.Errorf("%s container keeps seccompProfile", o.File)
			}
			if u, _, _ := unstructured.NestedInt64(cm, "securityContext", "runAsUser"); u != 65534 {
				t.Errorf("%s runAsUser %d", o.File, u)
			}
			img := cm["image"].(string)
			args, _, _ := unstructured.NestedStringSlice(cm, "args")
			switch o.File {
			case "csi_controller_deployment.yaml":
				if img != "{{ .ReleaseImage.csi_snapshot_controller }}" {
					t.Errorf("controller image %q", img)
				}
				if strings.Join(args, " ") != "--v=2 --leader-election=false" {
					t.Errorf("controller args %v", args)
				}
			case "webhook_deployment.yaml":
				if img != "{{ .ReleaseImage.csi_snapshot_validation_webhook }}" {
					t.Errorf("webhook image %q", img)
				}
			}
		}
	}
	sort.Strings(files)
	want := []string{"clusterrole.yaml", "clusterrolebinding.yaml", "csi_controller_deployment.yaml", "role.yaml", "rolebinding.yaml",
		"serviceaccount.yaml", "volumesnapshotclasses.yaml", "volumesnapshotcontents.yaml", "volumesnapshots.yaml"}
	if e.SnapshotWebhook {
		want = append(want, "webhook_clusterrole.yaml", "webhook_clusterrolebinding.yaml", "webhook_config.yaml", "webhook_deployment.yaml",
			"webhook_service.yaml", "webhook_serviceaccount.yaml")
		sort.Strings(want)
	}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("files:\n got %v\nwant %v", files, want)
	}
	if !e.SnapshotWebhook && len(r.Skipped) != 6 {
		t.Errorf("skipped %v", r.Skipped)
	}
}

func TestTranslateErrors(t *testing.T) {
	e, err := era.For("4.17")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(a *Assets)
		want []string
	}{
		{"unknown kind in split file", func(a *Assets) {
			a.Files["manifests/05_operand_rbac.yaml"] = append(a.Files["manifests/05_operand_rbac.yaml"], []byte("\n---\nkind: Secret\napiVersion: v1\nmetadata: {name: s}\n")...)
		}, []string{`manifests/05_operand_rbac.yaml: kind "Secret" (s) has no MicroShift file in the snapshot name table`, commit}},
		{"webhook file missing", func(a *Assets) { delete(a.Files, "assets/webhook_config.yaml") }, []string{"missing assets/webhook_config.yaml", commit}},
		{"two objects in a single-object file", func(a *Assets) {
			a.Files["assets/serviceaccount.yaml"] = []byte("kind: A\n---\nkind: B\n")
		}, []string{"assets/serviceaccount.yaml holds 2 objects, expected 1"}},
		{"document without kind", func(a *Assets) { a.Files["assets/serviceaccount.yaml"] = []byte("apiVersion: v1\n") }, []string{"decoding assets/serviceaccount.yaml: document 1 has no kind"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := loadTree(t, "release-4.17")
			tc.edit(a)
			_, err := Translate(a, e)
			if err == nil {
				t.Fatal("Translate succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// FuzzReadTar checks the tar reader never panics and only ever yields wanted, clean paths.
func FuzzReadTar(f *testing.F) {
	top := "cluster-csi-snapshot-controller-operator-" + commit + "/"
	f.Add(tarball(f, true, treeEntries(f, "main", top)))
	f.Add(tarball(f, false, treeEntries(f, "release-4.17", "./")))
	f.Add(tarball(f, false, []entry{{name: "../x", typeflag: tar.TypeReg, data: []byte("x")}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := map[string][]byte{}
		if err := readTar(bytes.NewReader(data), out); err != nil {
			return
		}
		for p, d := range out {
			if !wanted(p) || strings.Contains(p, "..") || strings.HasPrefix(p, "/") || len(d) > MaxFileBytes {
				t.Fatalf("readTar yielded %q (%d bytes)", p, len(d))
			}
		}
	})
}

// TestSplitFollowsEra: the leader-election Role and RoleBinding of 05_operand_rbac.yaml get
// files of their own only where MicroShift ships them (main, 5.0); before that they live in
// the kept multi-document file only, while the cluster RBAC is split out in every era.
func TestSplitFollowsEra(t *testing.T) {
	for _, tc := range []struct {
		ocp       string
		ownFileOf map[string]bool
	}{
		{"4.16", map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "Role": false, "RoleBinding": false}},
		{"4.18", map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "Role": false, "RoleBinding": false}},
		{"5.0", map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true}},
	} {
		e, err := era.Combine(tc.ocp, "4.17")
		if tc.ocp == "4.16" {
			e, err = era.For(tc.ocp)
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := Translate(loadTree(t, "main"), e)
		if err != nil {
			t.Fatalf("%s: %v", tc.ocp, err)
		}
		seen := map[string]bool{}
		for i, o := range r.Objects {
			if r.Origins[i].Source != "manifests/05_operand_rbac.yaml" {
				continue
			}
			kind := o.GetKind()
			seen[kind] = true
			if own := !r.Origins[i].AggregateOnly; own != tc.ownFileOf[kind] {
				t.Errorf("OCP %s: %s has a file of its own = %v, want %v", tc.ocp, kind, own, tc.ownFileOf[kind])
			}
		}
		if len(seen) != len(tc.ownFileOf) {
			t.Errorf("OCP %s: kinds of 05_operand_rbac.yaml %v, want %v", tc.ocp, seen, tc.ownFileOf)
		}
	}
}
