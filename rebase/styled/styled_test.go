package styled

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	lvmsrebase "github.com/lvms-rebase/lvms-rebase"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/dirtree"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/fixtures"
	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
	"github.com/lvms-rebase/lvms-rebase/rebase/bundle"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/keepstyle"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
	"github.com/lvms-rebase/lvms-rebase/rebase/snapshot"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// ocp is the release the tests rebase onto. Its era ships the snapshot controller's cluster
// RBAC both as the operator's multi-document file and split into a file per kind, so every
// way of finding an upstream file is used: a whole file, its first document and a later one.
const ocp = "4.18"

// The component directories as prefixes of the tree's paths.
const (
	lvmsDir = render.LVMSDir + "/"
	snapDir = render.SnapshotDir + "/"
)

// inputs are what a run hands this package, taken from the committed fixtures (the images and
// snapshot-asset tarballs internal/testing/fixtures generates): the era, the translation of
// its newest bundle, and the snapshot-controller operator's assets with their translation.
type inputs struct {
	era    era.Era
	lvms   []*unstructured.Unstructured
	snap   *snapshot.Result
	assets *snapshot.Assets
}

// base is rendered once for all tests (a render takes most of a second under -race).
type base struct {
	in *inputs
	// lvms is the LVMS part styled for a checkout without files.
	lvms *Part
	// styled is the tree for a checkout without files; raw is the same without snapshot
	// assets: with neither a checkout file nor an upstream one, every file is as rendered.
	styled, raw *Tree
}

// loadBase renders the base on first use; tests running in parallel wait for it.
var loadBase = sync.OnceValues(func() (*base, error) {
	in, err := loadInputs()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "styled-empty-checkout-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(root)
	b := &base{in: in}
	if b.lvms, err = LVMS(root, in.era, lvmsrebase.Kustomize, in.lvms); err != nil {
		return nil, err
	}
	if b.styled, err = Render(root, in.era, lvmsrebase.Kustomize, b.lvms, in.snap, in.assets); err != nil {
		return nil, err
	}
	if b.raw, err = Render(root, in.era, lvmsrebase.Kustomize, b.lvms, in.snap, nil); err != nil {
		return nil, err
	}
	return b, nil
})

// fixture is the shared base, failing t when the fixtures do not load or render.
func fixture(t *testing.T) *base {
	t.Helper()
	b, err := loadBase()
	if err != nil {
		t.Fatalf("rendering the %s fixtures: %v", ocp, err)
	}
	return b
}

// loadInputs reads the era's inputs from the fixture tree testregistry.FixturesDir finds.
func loadInputs() (*inputs, error) {
	dir, err := testregistry.FixturesDir()
	if err != nil {
		return nil, err
	}
	cat, err := fixtures.ReadCatalog(os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	e, err := era.For(ocp)
	if err != nil {
		return nil, err
	}
	in := &inputs{era: e}
	if in.lvms, err = bundleObjects(dir, cat, e); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(cat.SnapshotAssets, func(s fixtures.SnapshotInfo) bool { return s.Minor == ocp })
	if i < 0 {
		return nil, fmt.Errorf("no snapshot assets for %s in the fixture catalog", ocp)
	}
	sa := cat.SnapshotAssets[i]
	if in.assets, err = snapshot.Load(context.Background(), filepath.Join(dir, filepath.FromSlash(sa.File)), sa.Commit, nil); err != nil {
		return nil, err
	}
	in.snap, err = snapshot.Translate(in.assets, e)
	return in, err
}

// bundleObjects translates the newest fixture bundle of the era's minor, pulled from its OCI
// layout by the image source, as a run pulls an oci: bundle.
func bundleObjects(dir string, cat *fixtures.Catalog, e era.Era) ([]*unstructured.Unstructured, error) {
	info, ok := cat.NewestBundle(ocp)
	if !ok {
		return nil, fmt.Errorf("no %s bundle in the fixture catalog", ocp)
	}
	tmp, err := os.MkdirTemp("", "styled-bundle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ref := "oci:" + filepath.Join(dir, fixtures.ImagesDir, filepath.FromSlash(fixtures.BundleRepo)) + ":" + info.Tag
	src, err := source.New(source.Options{CacheDir: filepath.Join(tmp, "cache"), Offline: true})
	if err != nil {
		return nil, err
	}
	out := filepath.Join(tmp, "bundle")
	if _, err := src.FetchBundle(context.Background(), source.BundleRef{Ref: ref}, out); err != nil {
		return nil, err
	}
	b, err := bundle.Load(out)
	if err != nil {
		return nil, err
	}
	r, err := bundle.Translate(b, e, bundle.Options{VersionTag: info.Tag})
	if err != nil {
		return nil, err
	}
	return r.Objects, nil
}

// renderTree styles both overlays for the checkout at root, as a run does.
func renderTree(t *testing.T, root string, in *inputs) *Tree {
	t.Helper()
	part, err := LVMS(root, in.era, lvmsrebase.Kustomize, in.lvms)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Render(root, in.era, lvmsrebase.Kustomize, part, in.snap, in.assets)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// checkout is a new MicroShift checkout holding files (slash-separated paths).
func checkout(t *testing.T, files map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	return root
}

// writeFiles writes files (slash-separated paths) under root.
func writeFiles(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for p, data := range files {
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lineDiff shows two files line by line, carriage returns visible.
func lineDiff(want, got []byte) string {
	show := func(b []byte) string { return strings.ReplaceAll(string(b), "\r", `\r`) }
	return cmp.Diff(show(want), show(got))
}

// TestRenderWithoutCheckoutGivesEveryFile: with no file in the checkout, the tree holds every
// rendered file of both overlays, each meaning exactly what the render says (an LVMS file,
// with no upstream file to follow, is as rendered), and reports the managed directories and
// release placeholders. The files are the era's golden tree's.
func TestRenderWithoutCheckoutGivesEveryFile(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	golden(t, ocp, b.styled.Files)
	if diff := cmp.Diff(slices.Sorted(maps.Keys(b.raw.Files)), slices.Sorted(maps.Keys(b.styled.Files))); diff != "" {
		t.Errorf("files differ from the render's (-rendered +styled):\n%s", diff)
	}
	for p, raw := range b.raw.Files {
		if got := b.styled.Files[p]; !keepstyle.Equal(got, raw) {
			t.Errorf("%s does not mean what was rendered (-rendered +styled):\n%s", p, lineDiff(raw, got))
		}
	}
	for _, f := range b.lvms.Part.Files {
		if got := b.styled.Files[f.Path]; !bytes.Equal(got, f.Data) {
			t.Errorf("%s: an LVMS file, with neither a checkout file nor an upstream one, is not as rendered (-rendered +styled):\n%s", f.Path, lineDiff(f.Data, got))
		}
	}
	if want := []string{render.SnapshotDir, render.LVMSDir}; !slices.Equal(b.styled.Managed, want) {
		t.Errorf("Managed = %v, want %v", b.styled.Managed, want)
	}
	image := "spec.template.spec.containers[0].image"
	wantImages := []render.ImageUse{
		{File: lvmsDir + "lvms-operator_apps_v1_deployment.yaml", Kind: "Deployment", Name: "lvms-operator", Field: image, Key: "lvms_operator"},
		{File: snapDir + "csi_controller_deployment.yaml", Kind: "Deployment", Name: "csi-snapshot-controller", Field: image, Key: "csi_snapshot_controller"},
	}
	if diff := cmp.Diff(wantImages, b.styled.Images); diff != "" {
		t.Errorf("Images (-want +got):\n%s", diff)
	}
}

// golden compares files with the component directories of the minor's end-to-end golden tree
// (testdata/golden/<minor> at the repository root, written with -update by the CLI's golden
// test): that run's checkout, testdata/microshift, holds none of the files a 4.18 render
// writes, so it writes what Render gives for an empty checkout, and the files keep one
// golden home.
func golden(t *testing.T, minor string, files map[string][]byte) {
	t.Helper()
	all, err := dirtree.Read(filepath.Join("..", "..", "testdata", "golden", minor))
	if err != nil {
		t.Fatalf("reading the golden tree of %s: %v", minor, err)
	}
	want := map[string][]byte{}
	for p, w := range all {
		if strings.HasPrefix(p, render.SnapshotDir+"/") || strings.HasPrefix(p, render.LVMSDir+"/") {
			want[p] = w
		}
	}
	if len(want) == 0 {
		t.Fatalf("the golden tree of %s has no file under %s or %s", minor, render.SnapshotDir, render.LVMSDir)
	}
	for p, w := range want {
		if g, ok := files[p]; !ok {
			t.Errorf("%s: in the golden tree, not rendered", p)
		} else if !bytes.Equal(g, w) {
			t.Errorf("%s differs from the golden tree (-golden +got):\n%s", p, lineDiff(w, g))
		}
	}
	for p := range files {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: rendered, not in the golden tree", p)
		}
	}
}

// checkoutCase is a file the checkout already holds: the rendered file in the checkout's form,
// possibly with one value edited by hand.
type checkoutCase struct {
	name, path string
	// form writes the rendered file as the checkout has it.
	form func(t *testing.T, data []byte) []byte
	// from, to: the checkout file has the first from of its form replaced by to, a value
	// the render changes back; "" when the checkout file means what is rendered.
	from, to string
}

var checkoutCases = []checkoutCase{
	// Same objects, other formatting: the file's bytes are kept.
	{name: "LVMS file in MicroShift's legacy form keeps its bytes", path: lvmsDir + "lvms-operator_apps_v1_deployment.yaml",
		form: microShiftStyle},
	{name: "LVMS file with a comment and 4-space indentation keeps its bytes", path: lvmsDir + "topolvm_default-storage-class.yaml",
		form: both(restyle(fixtures.FileForm{Indent: 4, IndentedLists: true}), comment("# Default storage class of MicroShift\n"))},
	{name: "LVMS file as pretty JSON with CRLF keeps its bytes", path: lvmsDir + "lvms-webhook-service_v1_service.yaml",
		form: restyle(fixtures.FileForm{JSONIndent: "  ", CRLF: true})},
	{name: "snapshot file keeps the checkout's bytes, not the upstream form", path: snapDir + "serviceaccount.yaml",
		form: microShiftStyle},
	{name: "multi-document snapshot file keeps the checkout's bytes", path: snapDir + "05_operand_rbac.yaml",
		form: restyle(fixtures.FileForm{Indent: 4, IndentedLists: true, NoFinalNewline: true})},

	// A changed value: the new value is written in the checkout file's form.
	{name: "changed LVMS value keeps 4-space indentation and CRLF", path: lvmsDir + "topolvm-configmap_lvms-version.yaml",
		form: restyle(fixtures.FileForm{Indent: 4, CRLF: true}), from: "version: v4.18.4-3", to: "version: v4.17.7-2"},
	{name: "changed LVMS value keeps the checkout's double quotes", path: lvmsDir + "lvms_default-lvmcluster.yaml",
		form: rewrite("namespace: openshift-storage", `namespace: "openshift-storage"`), from: `"openshift-storage"`, to: `"openshift-storage-old"`},
	{name: "changed LVMS value keeps the checkout's comments", path: lvmsDir + "topolvm-openshift-storage_namespace.yaml",
		form: both(comment("# The LVMS namespace\n"), rewrite("enforce: privileged\n", "enforce: privileged # vg-manager needs the host\n")),
		from: "enforce: privileged", to: "enforce: restricted"},
	{name: "changed snapshot value keeps the checkout's form, not the upstream one", path: snapDir + "csi_controller_deployment.yaml",
		form: restyle(fixtures.FileForm{IndentedLists: true, CRLF: true}), from: "- --leader-election=false", to: "- --leader-election=true"},
	{name: "changed snapshot value in a file split from upstream keeps the checkout's form", path: snapDir + "clusterrole.yaml",
		form: restyle(fixtures.FileForm{Indent: 4}), from: "- persistentvolumes", to: "- persistentvolumez"},
}

// TestCheckoutFileFormKept renders for a checkout holding one file of each case: a file
// meaning what is rendered keeps its bytes, one with a hand-edited value gets the rendered
// value back in its own form (byte for byte its form of the rendered file), whether the
// LVMS part or the snapshot part renders it and even where an upstream file exists. Files
// the checkout lacks are as for an empty checkout.
func TestCheckoutFileFormKept(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	files, want := map[string][]byte{}, map[string][]byte{}
	for _, c := range checkoutCases {
		raw, ok := b.raw.Files[c.path]
		if !ok {
			t.Fatalf("%s: %s is not rendered", c.name, c.path)
		}
		w := c.form(t, raw)
		if bytes.Equal(w, raw) || bytes.Equal(w, b.styled.Files[c.path]) {
			t.Fatalf("%s: the form is the one the file gets without a checkout file; the case proves nothing", c.name)
		}
		if _, dup := want[c.path]; dup {
			t.Fatalf("%s: %s is already another case's (cases share one checkout)", c.name, c.path)
		}
		want[c.path], files[c.path] = w, w
		if c.from != "" {
			if !bytes.Contains(w, []byte(c.from)) {
				t.Fatalf("%s: no %q to edit in:\n%s", c.name, c.from, w)
			}
			files[c.path] = bytes.Replace(w, []byte(c.from), []byte(c.to), 1)
		}
	}
	tree := renderTree(t, checkout(t, files), b.in)
	for _, c := range checkoutCases {
		t.Run(c.name, func(t *testing.T) {
			if got := tree.Files[c.path]; !bytes.Equal(got, want[c.path]) {
				t.Errorf("%s not in the checkout's form (-want +got):\n%s", c.path, lineDiff(want[c.path], got))
			}
		})
	}
	for p, got := range tree.Files {
		if _, ok := want[p]; !ok && !bytes.Equal(got, b.styled.Files[p]) {
			t.Errorf("%s: not in the checkout, yet differs from the empty checkout's (-empty +got):\n%s", p, lineDiff(b.styled.Files[p], got))
		}
	}
}

// restyle writes a file in form f (fixtures.Restyle).
func restyle(f fixtures.FileForm) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte {
		t.Helper()
		out, err := fixtures.Restyle(data, f)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// microShiftStyle writes a file as MicroShift's legacy rebase scripts left it.
func microShiftStyle(t *testing.T, data []byte) []byte {
	t.Helper()
	out, err := fixtures.MicroShiftStyle(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// comment puts a head comment on a file.
func comment(c string) func(*testing.T, []byte) []byte {
	return func(_ *testing.T, data []byte) []byte { return append([]byte(c), data...) }
}

// rewrite replaces the first from, which must be there, with to: the same objects written otherwise.
func rewrite(from, to string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte {
		t.Helper()
		if !bytes.Contains(data, []byte(from)) {
			t.Fatalf("no %q in:\n%s", from, data)
		}
		return bytes.Replace(data, []byte(from), []byte(to), 1)
	}
}

// both applies f, then g.
func both(f, g func(*testing.T, []byte) []byte) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte { return g(t, f(t, data)) }
}

// TestUpstreamFormWithoutCheckoutFile: a snapshot file the checkout lacks is written in the
// form of the operator file it comes from (its key order, flow lists, quotes and comments),
// as MicroShift's rebase.sh copies it: the whole file for a multi-document file kept whole,
// the object's own document for a file split out of one.
func TestUpstreamFormWithoutCheckoutFile(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	const rbac = "manifests/05_operand_rbac.yaml"
	cases := []struct {
		name, file, source string
		doc                int // the source document followed; -1: the whole file
		marker             string
	}{
		{"one-object file keeps upstream's head comment", "serviceaccount.yaml", "assets/serviceaccount.yaml", 0,
			"# Generated fixture modelled on openshift/cluster-csi-snapshot-controller-operator assets/.\napiVersion: v1\n"},
		{"deployment keeps upstream's key order and comments", "csi_controller_deployment.yaml", "assets/csi_controller_deployment.yaml", 0,
			"kind: Deployment\napiVersion: apps/v1\n"},
		{"first document split out follows that document", "clusterrole.yaml", rbac, 0,
			"kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\n"},
		{"later document split out follows that document", "clusterrolebinding.yaml", rbac, 1,
			"kind: ClusterRoleBinding\napiVersion: rbac.authorization.k8s.io/v1\n"},
		{"multi-document file kept whole follows the whole file", "05_operand_rbac.yaml", rbac, -1,
			"- apiGroups: [\"coordination.k8s.io\"]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := snapDir + c.file
			got, raw := b.styled.Files[p], b.raw.Files[p]
			upstream, ok := b.in.assets.Files[c.source]
			if !ok {
				t.Fatalf("no upstream %s", c.source)
			}
			if c.doc >= 0 {
				var err error
				if upstream, err = keepstyle.Document(upstream, c.doc); err != nil {
					t.Fatal(err)
				}
			}
			if want := keepstyle.Apply(upstream, raw); !bytes.Equal(got, want) {
				t.Errorf("%s does not follow %s document %d (-want +got):\n%s", p, c.source, c.doc, lineDiff(want, got))
			}
			if bytes.Equal(got, raw) || !bytes.Contains(got, []byte(c.marker)) {
				t.Errorf("%s lacks upstream's %q:\n%s", p, c.marker, got)
			}
		})
	}
}

// TestRenderReusesLVMSStyling: the LVMS part is styled when LVMS runs, ahead of the snapshot
// overlay, and Render puts those bytes in the tree as they are, whatever its own checkout
// holds by then; a part file whose bytes changed after styling is styled again by Render.
func TestRenderReusesLVMSStyling(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	const dep = lvmsDir + "lvms-operator_apps_v1_deployment.yaml"
	raw := b.raw.Files[dep]
	atLVMS := restyle(fixtures.FileForm{Indent: 4, IndentedLists: true})(t, raw)
	atRender := restyle(fixtures.FileForm{IndentedLists: true})(t, raw)
	root := checkout(t, map[string][]byte{dep: replicas(t, atLVMS, 2)})
	part, err := LVMS(root, b.in.era, lvmsrebase.Kustomize, b.in.lvms)
	if err != nil {
		t.Fatal(err)
	}
	// The checkout's file changes form between the two overlays.
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(dep)), atRender, 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := Render(root, b.in.era, lvmsrebase.Kustomize, part, b.in.snap, b.in.assets)
	if err != nil {
		t.Fatal(err)
	}
	if got := tree.Files[dep]; !bytes.Equal(got, atLVMS) {
		t.Errorf("%s is not as LVMS styled it (-want +got):\n%s", dep, lineDiff(atLVMS, got))
	}

	changed := withFile(part, dep, replicas(t, raw, 3))
	tree, err = Render(root, b.in.era, lvmsrebase.Kustomize, changed, b.in.snap, b.in.assets)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tree.Files[dep], replicas(t, atRender, 3); !bytes.Equal(got, want) {
		t.Errorf("%s changed after styling is not styled after Render's checkout (-want +got):\n%s", dep, lineDiff(want, got))
	}
}

// replicas is a deployment file with its one replica set to n.
func replicas(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	from := []byte("replicas: 1\n")
	if !bytes.Contains(data, from) {
		t.Fatalf("no %q in:\n%s", from, data)
	}
	return bytes.Replace(data, from, fmt.Appendf(nil, "replicas: %d\n", n), 1)
}

// withFile is p with the rendered bytes of file path replaced by data, its styling kept.
func withFile(p *Part, path string, data []byte) *Part {
	files := slices.Clone(p.Part.Files)
	for i := range files {
		if files[i].Path == path {
			files[i].Data = data
		}
	}
	return &Part{Part: &render.Part{Files: files, Images: p.Part.Images}, styled: p.styled}
}

// TestRenderErrors: what keeps a tree from being rendered and styled fails the call that meets
// it, naming what failed. A checkout file that cannot be read fails Render even when LVMS
// styled it: LVMS keeps the error with the file, since its caller only waits for the part.
func TestRenderErrors(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	const rbac = "manifests/05_operand_rbac.yaml"
	cases := []struct {
		name string
		// lvmsDirAt and renderDirAt put a directory where the checkout LVMS or Render styles
		// after would hold that file ("": a checkout without files).
		lvmsDirAt, renderDirAt string
		edit                   func(in *inputs)
		inLVMS                 bool // LVMS fails rather than Render
		want                   string
	}{
		{name: "unreadable LVMS file fails Render, named", lvmsDirAt: lvmsDir + "lvms-operator_v1_serviceaccount.yaml",
			want: "reading " + lvmsDir + "lvms-operator_v1_serviceaccount.yaml: "},
		{name: "unreadable snapshot file fails Render, named", renderDirAt: snapDir + "serviceaccount.yaml",
			want: "reading " + snapDir + "serviceaccount.yaml: "},
		{name: "missing upstream document fails Render, naming the operator file", edit: upstreamDoc("clusterrolebinding.yaml", 9),
			want: fmt.Sprintf("snapshot assets %s: %s: document 10: the file has 4", b.in.assets.Source, rbac)},
		{name: "LVMS overlay failing to build fails LVMS", edit: func(in *inputs) { in.era.LVMSOverlay = "overlays/lvms/9.99" },
			inLVMS: true, want: "overlays/lvms/9.99"},
		{name: "snapshot overlay failing to build fails Render", edit: func(in *inputs) { in.era.SnapshotOverlay = "overlays/csi-snapshot-controller/9.99" },
			want: "overlays/csi-snapshot-controller/9.99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := *b.in
			if c.edit != nil {
				c.edit(&in)
			}
			part := b.lvms
			if c.lvmsDirAt != "" || c.inLVMS {
				var err error
				part, err = LVMS(dirAt(t, c.lvmsDirAt), in.era, lvmsrebase.Kustomize, in.lvms)
				if c.inLVMS {
					wantErr(t, "LVMS", part == nil, err, c.want)
					return
				}
				if err != nil {
					t.Fatalf("LVMS: %v (a styling error is Render's to return)", err)
				}
			}
			tree, err := Render(dirAt(t, c.renderDirAt), in.era, lvmsrebase.Kustomize, part, in.snap, in.assets)
			wantErr(t, "Render", tree == nil, err, c.want)
		})
	}
}

// upstreamDoc points the snapshot object shipped as file at document doc of its source.
func upstreamDoc(file string, doc int) func(*inputs) {
	return func(in *inputs) {
		s := *in.snap
		s.Origins = slices.Clone(s.Origins)
		for i := range s.Origins {
			if s.Origins[i].File == file {
				s.Origins[i].Doc = doc
			}
		}
		in.snap = &s
	}
}

// dirAt is a checkout holding only a directory at p (none when p is "").
func dirAt(t *testing.T, p string) string {
	t.Helper()
	root := t.TempDir()
	if p != "" {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(p)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// wantErr fails t unless call failed with an error containing want and no result.
func wantErr(t *testing.T, call string, noResult bool, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s succeeded, want an error containing %q", call, want)
	case !strings.Contains(err.Error(), want):
		t.Fatalf("%s: %v, want an error containing %q", call, err, want)
	case !noResult:
		t.Errorf("%s returned a result with its error", call)
	}
}

// TestCheckoutFileNotUTF8: a checkout file with a byte that is not UTF-8 (a Latin-1 comment)
// does not parse as YAML, so it cannot be styled (and MicroShift cannot decode it either):
// the call fails naming the file, the line and the byte, rather than writing the rendered
// file over it with the comment silently gone.
func TestCheckoutFileNotUTF8(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	for _, p := range []string{lvmsDir + "lvms-operator_v1_serviceaccount.yaml", snapDir + "serviceaccount.yaml"} {
		t.Run(p, func(t *testing.T) {
			data := append([]byte("# r\xe9vis\xe9 \xe0 la main\n"), b.styled.Files[p]...)
			root := checkout(t, map[string][]byte{p: data})
			part, err := LVMS(root, b.in.era, lvmsrebase.Kustomize, b.in.lvms)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := Render(root, b.in.era, lvmsrebase.Kustomize, part, b.in.snap, b.in.assets)
			wantErr(t, "Render", tree == nil, err, p+": line 1: byte 0xe9 is not UTF-8")
		})
	}
}
