// Package render turns an era's kustomize overlays plus the objects generated from the LVMS
// bundle and the OCP payload into MicroShift's asset files: one object per file, named as
// MicroShift names them.
//
// Render lays out a staging tree on disk:
//
//	<staging>/base/...                          the embedded bases (lvmsrebase.Kustomize)
//	<staging>/overlays/...                      the embedded overlays
//	<staging>/generated/lvms/                   Input.LVMS, one file per object + kustomization.yaml
//	<staging>/generated/csi-snapshot-controller Input.Snapshot, likewise
//
// and builds the era's two overlays with krusty, one at a time. The overlays carry what
// MicroShift changes per version: the snapshot overlay patches the operator's assets as
// upstream writes them (namespace, images, arguments, user, dropped fields). The staging tree
// is a plain kustomize tree, so `kubectl kustomize <staging>/<overlay>` gives the same objects
// (TestKubectlKustomize checks it with a stock kustomize, `make kustomize`); render then drops
// a metadata label or annotation map a patch left empty.
//
// Kustomize applies a patch with a target to whatever matches, silently to nothing when the
// object it was written for was renamed or removed upstream: a build fails here when a patch
// or replacement target naming an object matches none, and the snapshot overlay's files are
// refused when an upstream template variable (${OPERAND_IMAGE}, …) survived it.
package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/imageref"
	"github.com/lvms-rebase/lvms-rebase/internal/kinds"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// Component directories relative to the MicroShift checkout root.
const (
	LVMSDir     = "assets/components/lvms"
	SnapshotDir = "assets/components/csi-snapshot-controller"
)

// Staging directories (relative to the staging root) the overlays list as resources.
const (
	GeneratedLVMSDir     = "generated/lvms"
	GeneratedSnapshotDir = "generated/csi-snapshot-controller"
)

// Input is what one render needs.
type Input struct {
	// Era selects the overlays (Era.LVMSOverlay, Era.SnapshotOverlay) and the name table.
	Era era.Era
	// Kustomize is a tree with base/ and overlays/ (normally lvmsrebase.Kustomize).
	Kustomize fs.FS
	// LVMS are the objects generated from the bundle CSV and manifests.
	LVMS []*unstructured.Unstructured
	// Snapshot are the objects generated from the snapshot-controller assets.
	Snapshot []*unstructured.Unstructured
	// Aggregates are multi-document files shipped besides the one-object files of their
	// members (MicroShift's csi-snapshot-controller/05_operand_rbac.yaml).
	Aggregates []Aggregate
	// StagingDir is where the staging tree is laid out; it must be absent or empty and is
	// kept afterwards. "" uses a temporary directory that is removed.
	StagingDir string
}

// Aggregate is a multi-document asset file made of rendered objects, in this order.
type Aggregate struct {
	Path    string   // relative to the MicroShift root, slash-separated
	Members []ObjRef // rendered objects, by kind and name
}

// ObjRef names a rendered object.
type ObjRef struct {
	Kind, Name string
	// Only: the member is shipped inside the aggregate only, not as a file of its own.
	Only bool
}

// File is one rendered asset file.
type File struct {
	Path      string // relative to the MicroShift root, slash-separated
	Data      []byte // YAML of exactly one object
	Kind      string
	Name      string
	Namespace string
}

// Output is the rendered asset set.
type Output struct {
	// Files are sorted by Path.
	Files []File
	// ManagedDirs are the component directories whose whole content Files replaces, sorted.
	ManagedDirs []string
	// Images are the release placeholders the files carry, by file and field.
	Images []ImageUse
}

// Map returns the files as path → bytes, the form rebase/tree takes.
func (o *Output) Map() map[string][]byte {
	m := make(map[string][]byte, len(o.Files))
	for _, f := range o.Files {
		m[f.Path] = f.Data
	}
	return m
}

// Render builds the era's overlays and returns one file per object.
func Render(in Input) (*Output, error) {
	comps, err := components(in, LVMSPart, SnapshotPart)
	if err != nil {
		return nil, err
	}
	staging, cleanup, err := stagingDir(in.StagingDir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if err := Stage(staging, in.Kustomize, in.LVMS, in.Snapshot); err != nil {
		return nil, err
	}
	parts := make([]*Part, 0, len(comps))
	for _, c := range comps {
		p, err := c.build(in.Era, filesys.MakeFsOnDisk(), staging)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return Join(in.Era, in.Aggregates, parts...)
}

// Component names one of the era's two overlays.
type Component int

// The overlays, in the order Render builds and Join lists them.
const (
	LVMSPart Component = iota
	SnapshotPart
)

// Part is one overlay rendered on its own: its files (not yet sorted) and the release
// placeholders they carry.
type Part struct {
	Files  []File
	Images []ImageUse
}

// RenderPart builds one overlay from its own staging tree, held in memory (Input.StagingDir
// is not used) with only that component's objects (Input.LVMS or Input.Snapshot). A run
// renders the LVMS part while the snapshot assets are still being fetched, then joins both
// parts; Join(RenderPart(LVMSPart), RenderPart(SnapshotPart)) is Render's output.
func RenderPart(in Input, c Component) (*Part, error) {
	comps, err := components(in, c)
	if err != nil {
		return nil, err
	}
	lvms, snap := in.LVMS, in.Snapshot
	if c == LVMSPart {
		snap = nil
	} else {
		lvms = nil
	}
	const staging = "/staging"
	fsys := filesys.MakeFsInMemory()
	if err := stageFS(fsys, staging, in.Kustomize, lvms, snap); err != nil {
		return nil, err
	}
	return comps[0].build(in.Era, fsys, staging)
}

// Join checks the parts together (every webhook's Service is shipped), adds the
// multi-document aggregates and sorts the files by path.
func Join(e era.Era, aggregates []Aggregate, parts ...*Part) (*Output, error) {
	out := &Output{ManagedDirs: []string{SnapshotDir, LVMSDir}}
	for _, p := range parts {
		out.Files = append(out.Files, p.Files...)
		out.Images = append(out.Images, p.Images...)
	}
	if err := checkWebhookServices(out.Files, e); err != nil {
		return nil, fmt.Errorf("render era %s: %w", e.Name, err)
	}
	if err := addAggregates(out, aggregates); err != nil {
		return nil, fmt.Errorf("render era %s: %w", e.Name, err)
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	return out, nil
}

// component is one overlay to build: where its files go, how they are named and which
// namespaces they may use.
type component struct {
	overlay, dir string
	rules        []NameRule
	namespaces   []string
	snapshot     bool
}

// components looks up the overlays of in.Era named by cs, in that order.
func components(in Input, cs ...Component) ([]component, error) {
	if in.Kustomize == nil {
		return nil, fmt.Errorf("render era %s: no kustomize tree given", in.Era.Name)
	}
	table, ok := NameTables[in.Era.Name]
	if !ok {
		return nil, fmt.Errorf("render era %q: no file name table declared (render.NameTables)", in.Era.Name)
	}
	snapNames, ok := SnapshotNameTables[in.Era.OCPEra]
	if !ok && slices.Contains(cs, SnapshotPart) {
		return nil, fmt.Errorf("render era %s: OCP era %q has no file name table (render.SnapshotNameTables)", in.Era.Name, in.Era.OCPEra)
	}
	out := make([]component, 0, len(cs))
	for _, c := range cs {
		switch c {
		case LVMSPart:
			// kube-public holds the lvms-version ConfigMap.
			out = append(out, component{in.Era.LVMSOverlay, LVMSDir, table.LVMS, []string{in.Era.Namespace, "kube-public"}, false})
		case SnapshotPart:
			out = append(out, component{in.Era.SnapshotOverlay, SnapshotDir, snapNames, []string{in.Era.SnapshotNamespace}, true})
		default:
			return nil, fmt.Errorf("render era %s: unknown component %d", in.Era.Name, c)
		}
	}
	return out, nil
}

// stagingDir is dir, checked empty, or a temporary directory removed by the cleanup.
func stagingDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, ensureEmptyDir(dir)
	}
	tmp, err := os.MkdirTemp("", "lvms-rebase-render-")
	if err != nil {
		return "", nil, fmt.Errorf("creating staging directory: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// build runs krusty on the component's overlay of a tree staged in fsys and checks its files.
func (c component) build(e era.Era, fsys filesys.FileSystem, staging string) (*Part, error) {
	rm, err := buildFS(fsys, staging, c.overlay)
	if err != nil {
		return nil, fmt.Errorf("render era %s: %w", e.Name, err)
	}
	if err := checkTargets(fsys, staging, c.overlay, rm); err != nil {
		return nil, fmt.Errorf("render era %s, overlay %s: %w", e.Name, c.overlay, err)
	}
	files, err := split(rm, c.dir, c.rules)
	if err != nil {
		return nil, fmt.Errorf("render era %s, overlay %s: %w", e.Name, c.overlay, err)
	}
	if err := checkNamespaces(files, c.namespaces); err != nil {
		return nil, fmt.Errorf("render era %s, overlay %s: %w", e.Name, c.overlay, err)
	}
	if c.snapshot {
		if err := checkSnapshot(files, e, c.overlay); err != nil {
			return nil, fmt.Errorf("render era %s, overlay %s: %w", e.Name, c.overlay, err)
		}
	}
	uses, err := checkImageRefs(files, e)
	if err != nil {
		return nil, fmt.Errorf("render era %s, overlay %s: %w", e.Name, c.overlay, err)
	}
	return &Part{Files: files, Images: uses}, nil
}

// addAggregates appends one multi-document file per aggregate, its documents being the
// members' files as rendered.
func addAggregates(out *Output, aggs []Aggregate) error {
	for _, a := range aggs {
		var docs [][]byte
		for _, m := range a.Members {
			var found *File
			for i := range out.Files {
				f := &out.Files[i]
				if f.Kind == m.Kind && f.Name == m.Name && path.Dir(f.Path) == path.Dir(a.Path) {
					found = f
				}
			}
			if found == nil {
				return fmt.Errorf("%s: member %s %s was not rendered", a.Path, m.Kind, m.Name)
			}
			docs = append(docs, found.Data)
		}
		for _, f := range out.Files {
			if f.Path == a.Path {
				return fmt.Errorf("%s: an object and a multi-document file both map to it", a.Path)
			}
		}
		out.Files = append(out.Files, File{Path: a.Path, Data: bytes.Join(docs, []byte("---\n"))})
		out.Files = slices.DeleteFunc(out.Files, a.only)
	}
	return nil
}

// only reports whether f is the own file of a member shipped inside the aggregate only.
func (a Aggregate) only(f File) bool {
	for _, m := range a.Members {
		if m.Only && f.Kind == m.Kind && f.Name == m.Name && path.Dir(f.Path) == path.Dir(a.Path) {
			return true
		}
	}
	return false
}

// Options returns the krusty options Render uses. Reorder is "legacy" on purpose: it is what
// stock `kubectl kustomize` does when neither the flag nor the kustomization's sortOptions
// say otherwise, whereas krusty's library default is "none". Render's files do not depend on
// the order (one object per file), but the build must equal the CLI's so that a maintainer
// can reproduce it with `kubectl kustomize`, and legacy order makes it independent of the
// order the generators happen to emit objects in.
func Options() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionLegacy
	return o
}

// Build runs krusty on one overlay of a staging tree laid out by Stage.
func Build(staging, overlay string) (resmap.ResMap, error) {
	return buildFS(filesys.MakeFsOnDisk(), staging, overlay)
}

// buildFS is Build on a staging tree in fsys.
func buildFS(fsys filesys.FileSystem, staging, overlay string) (resmap.ResMap, error) {
	if overlay == "" {
		return nil, fmt.Errorf("no overlay declared")
	}
	k := krusty.MakeKustomizer(Options())
	rm, err := k.Run(fsys, filepath.Join(staging, filepath.FromSlash(overlay)))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", overlay, err)
	}
	return rm, nil
}

// Stage writes the staging tree into dir: the kustomize tree kt and the generated objects
// as resource directories with their own kustomization.yaml.
func Stage(dir string, kt fs.FS, lvms, snapshot []*unstructured.Unstructured) error {
	return stageFS(filesys.MakeFsOnDisk(), dir, kt, lvms, snapshot)
}

// stageFS is Stage into fsys: on disk for Render (a tree `kubectl kustomize` can build), in
// memory for RenderPart.
func stageFS(fsys filesys.FileSystem, dir string, kt fs.FS, lvms, snapshot []*unstructured.Unstructured) error {
	err := fs.WalkDir(kt, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return fsys.MkdirAll(dst)
		}
		b, err := fs.ReadFile(kt, p) // safefile: the embedded kustomize tree, part of the binary
		if err != nil {
			return err
		}
		return fsys.WriteFile(dst, b)
	})
	if err != nil {
		return fmt.Errorf("staging kustomize tree into %s: %w", dir, err)
	}
	if err := writeGenerated(fsys, filepath.Join(dir, GeneratedLVMSDir), lvms); err != nil {
		return err
	}
	return writeGenerated(fsys, filepath.Join(dir, GeneratedSnapshotDir), snapshot)
}

func writeGenerated(fsys filesys.FileSystem, dir string, objs []*unstructured.Unstructured) error {
	if err := fsys.MkdirAll(dir); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	var k bytes.Buffer
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	if len(objs) == 0 {
		k.WriteString("resources: []\n")
	} else {
		k.WriteString("resources:\n")
	}
	for i, o := range objs {
		if o == nil {
			return fmt.Errorf("generated object %d for %s is nil", i, dir)
		}
		// The index keeps names unique even for objects whose kind/name collide, so that
		// kustomize, not the file system, reports the duplicate.
		name := fmt.Sprintf("%03d_%s_%s.yaml", i, strings.ToLower(o.GetKind()), safeName(o.GetName()))
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("generated %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		if err := fsys.WriteFile(filepath.Join(dir, name), b); err != nil {
			return fmt.Errorf("writing generated %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		fmt.Fprintf(&k, "- %s\n", name)
	}
	if err := fsys.WriteFile(filepath.Join(dir, "kustomization.yaml"), k.Bytes()); err != nil {
		return fmt.Errorf("writing %s/kustomization.yaml: %w", dir, err)
	}
	return nil
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// split turns a built overlay into files of dir named by rules.
func split(rm resmap.ResMap, dir string, rules []NameRule) ([]File, error) {
	var files []File
	seen := map[string]string{}
	for _, r := range rm.Resources() {
		obj, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		pruneEmptyMetadata(obj)
		u := &unstructured.Unstructured{Object: obj}
		name, err := FileName(rules, u.GetAPIVersion(), u.GetKind(), u.GetName())
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
		p := path.Join(dir, name)
		if other, dup := seen[p]; dup {
			return nil, fmt.Errorf("%s and %s both map to file %s", other, id, p)
		}
		seen[p] = id
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: marshalling: %w", id, err)
		}
		files = append(files, File{Path: p, Data: data, Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace()})
	}
	return files, nil
}

func ensureEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating staging directory: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("staging directory %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("staging directory %s: expected an empty or absent directory, it has %d entries", dir, len(entries))
	}
	return nil
}

// checkNamespaces rejects what MicroShift's typed decoders would silently accept: a
// namespace on a cluster-scoped object (a legacy defect), and a namespaced object outside
// the component's namespaces (e.g. the CSV's openshift-lvm-storage from LVMS 4.20 on).
func checkNamespaces(files []File, allowed []string) error {
	for _, f := range files {
		if kinds.ClusterScoped(f.Kind) {
			if f.Namespace != "" {
				return fmt.Errorf("%s %q is cluster-scoped but has namespace %q", f.Kind, f.Name, f.Namespace)
			}
			continue
		}
		ok := false
		for _, ns := range allowed {
			ok = ok || (ns != "" && f.Namespace == ns)
		}
		if !ok {
			return fmt.Errorf("%s %q: namespace %q, expected one of %q", f.Kind, f.Name, f.Namespace, allowed)
		}
	}
	return nil
}

// checkWebhookServices refuses a shipped admission webhook that calls a Service no shipped
// file creates and the era does not map to one MicroShift runs: every API request it matches
// would fail.
func checkWebhookServices(files []File, e era.Era) error {
	services := map[string]bool{}
	for _, f := range files {
		if f.Kind == "Service" {
			services[f.Namespace+"/"+f.Name] = true
		}
	}
	for _, m := range e.WebhookServices {
		services[m.Namespace+"/"+m.Name] = true
	}
	for _, f := range files {
		if f.Kind != "ValidatingWebhookConfiguration" && f.Kind != "MutatingWebhookConfiguration" {
			continue
		}
		var obj struct {
			Webhooks []struct {
				Name         string `json:"name"`
				ClientConfig struct {
					Service *struct{ Namespace, Name string } `json:"service"`
				} `json:"clientConfig"`
			} `json:"webhooks"`
		}
		if err := yaml.Unmarshal(f.Data, &obj); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, w := range obj.Webhooks {
			if svc := w.ClientConfig.Service; svc != nil && !services[svc.Namespace+"/"+svc.Name] {
				return fmt.Errorf("%s: %s %s: webhook %s calls Service %s/%s, which no shipped file creates", f.Path, f.Kind, f.Name, w.Name, svc.Namespace, svc.Name)
			}
		}
	}
	return nil
}

// templatePrefix starts every image reference an asset may carry: MicroShift fills it from
// release-<arch>.json, so the per-arch digests and image lists stay in one place.
const templatePrefix = "{{ ." + releasefile.TemplateField + "."

// placeholderRE is a release placeholder as the bundle translation and the snapshot patches
// write it; MicroShift's template engine accepts any spacing.
var placeholderRE = regexp.MustCompile(`\{\{-?\s*\.` + releasefile.TemplateField + `\.([A-Za-z0-9_]+)\s*-?\}\}`)

// ImageUse is one release placeholder in a shipped file: where an image of the release JSONs
// is used.
type ImageUse struct {
	File  string
	Kind  string
	Name  string
	Field string
	Key   string
}

// checkImageRefs walks every string of every file: it records each release placeholder and
// refuses any registry reference with a tag or digest that survived untemplated (the era's
// LiteralImages excepted), and any container image that is not a placeholder.
func checkImageRefs(files []File, e era.Era) ([]ImageUse, error) {
	var uses []ImageUse
	for _, f := range files {
		var obj any
		if err := yaml.Unmarshal(f.Data, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		var bad []string
		imageref.Strings(obj, func(field, s string) string {
			for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
				uses = append(uses, ImageUse{File: f.Path, Kind: f.Kind, Name: f.Name, Field: field, Key: m[1]})
			}
			for _, r := range imageref.Find(s) {
				if !e.AllowsLiteral(f.Kind, f.Name, field, r.Ref) {
					bad = append(bad, fmt.Sprintf("%s: %s %s field %s: registry reference %s is not templated; expected %s<key> }} "+
						"(declare the image in rebase/era, or allow this literal in the era's LiteralImages)", f.Path, f.Kind, f.Name, field, r.Ref, templatePrefix))
				}
			}
			return s
		})
		if len(bad) > 0 {
			return nil, errors.New(strings.Join(bad, "; "))
		}
		if err := checkContainerImages(f); err != nil {
			return nil, err
		}
	}
	return uses, nil
}

// checkContainerImages rejects a Deployment or DaemonSet whose container image is not a
// release placeholder (an image without registry host is no pinned reference, yet would
// still bypass the release JSONs).
func checkContainerImages(f File) error {
	if f.Kind != "Deployment" && f.Kind != "DaemonSet" {
		return nil
	}
	var obj struct {
		Spec struct {
			Template struct {
				Spec struct {
					InitContainers []container `json:"initContainers"`
					Containers     []container `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(f.Data, &obj); err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	pod := obj.Spec.Template.Spec
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		if !strings.HasPrefix(c.Image, templatePrefix) {
			return fmt.Errorf("%s: %s %s container %s: image %q is not a release placeholder (%s<key> }})", f.Path, f.Kind, f.Name, c.Name, c.Image, templatePrefix)
		}
	}
	return nil
}

type container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}
