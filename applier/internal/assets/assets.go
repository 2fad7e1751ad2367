// Package assets reads the applier's input trees as lvms-rebase writes them (assets/components/…),
// and turns their documents into objects: the file list per component, multi-document decoding,
// template rendering with MicroShift's functions, sanitising through the typed scheme, and the
// declared apply order of kinds.
package assets

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
	"github.com/lvms-rebase/lvms-rebase/applier/internal/readfile"
	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
)

// Component directories under assets/, as the rebase writes them (the release files are
// package releasefile's).
const (
	StorageDir  = "components/lvms"
	SnapshotDir = "components/csi-snapshot-controller"
)

// Component tells which gate an object belongs to.
type Component int

// Components: files are Storage or Snapshot; a rendered snapshot object that is not a CRD is
// SnapshotController or SnapshotWebhook.
const (
	Storage Component = iota
	Snapshot
	SnapshotController
	SnapshotWebhook
)

// skippedFiles are shipped files the applier must not apply, with the reason.
var skippedFiles = map[string]string{
	// The operator's aggregate manifest duplicates clusterrole.yaml and clusterrolebinding.yaml,
	// and its leader-election Role is unused: the controller runs with --leader-election=false.
	SnapshotDir + "/05_operand_rbac.yaml": "aggregate of the split RBAC files",
}

// createOnlyKinds are created when absent and never updated: the LVMCluster belongs to the
// administrator once it exists.
var createOnlyKinds = []string{"LVMCluster"}

// Object is one decoded asset document.
type Object struct {
	// File is the asset it came from, for errors and logs.
	File string
	Comp Component
	Obj  *unstructured.Unstructured
}

// Ref names the object.
func (o Object) Ref() eras.ObjectRef { return RefOf(o.Obj) }

// RefOf names u.
func RefOf(u *unstructured.Unstructured) eras.ObjectRef {
	gvk := u.GroupVersionKind()
	return eras.ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// File is one asset file before rendering.
type File struct {
	Path string
	Comp Component
	Data []byte
}

// MaxFileSize caps one asset file; the largest, a CRD, is about 100 KiB.
const MaxFileSize = 8 << 20

// Read lists the YAML files of both components in name order: regular files only, each at most
// MaxFileSize.
func Read(fsys fs.FS) ([]File, error) {
	var files []File
	for _, d := range []struct {
		dir  string
		comp Component
	}{{SnapshotDir, Snapshot}, {StorageDir, Storage}} {
		entries, err := fs.ReadDir(fsys, d.dir)
		if errors.Is(err, fs.ErrNotExist) {
			// An incomplete tree (not rebased, or copied partly) must not be taken for one that
			// ships nothing of a component: that would delete what the component deployed.
			return nil, fmt.Errorf("assets: component directory %s is missing; expected the manifests lvms-rebase writes (nothing applied or deleted)", d.dir)
		}
		if err != nil {
			return nil, fmt.Errorf("reading assets %s: %w", d.dir, err)
		}
		n := len(files)
		for _, e := range entries {
			p := path.Join(d.dir, e.Name())
			if e.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
				continue
			}
			if _, skip := skippedFiles[p]; skip {
				continue
			}
			if !e.Type().IsRegular() {
				// lvms-rebase writes regular files; a link or a FIFO is not an asset it wrote.
				return nil, fmt.Errorf("asset %s: %s, not a regular file (nothing applied or deleted)", p, readfile.Describe(e.Type()))
			}
			data, err := readfile.FS(fsys, p, MaxFileSize)
			if err != nil {
				return nil, fmt.Errorf("reading asset: %w", err)
			}
			files = append(files, File{Path: p, Comp: d.comp, Data: data})
		}
		if len(files) == n {
			return nil, fmt.Errorf("assets: component directory %s has no YAML files (nothing applied or deleted)", d.dir)
		}
	}
	return files, nil
}

// Peek decodes unrendered files (placeholders are quoted, so each file is valid YAML) to learn
// which objects the assets ship before any configuration is read.
func Peek(files []File) ([]eras.ObjectRef, error) {
	var refs []eras.ObjectRef
	for _, f := range files {
		docs, err := DecodeDocs(f.Path, f.Data)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			refs = append(refs, RefOf(d))
		}
	}
	return refs, nil
}

// DecodeDocs splits a possibly multi-document file into objects; empty documents are skipped.
func DecodeDocs(name string, data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("asset %s document %d: %w", name, i, err)
		}
		if len(bytes.TrimSpace(StripComments(doc))) == 0 {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("asset %s document %d: %w", name, i, err)
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("asset %s document %d: expected apiVersion, kind and metadata.name", name, i)
		}
		out = append(out, u)
	}
	return out, nil
}

var missingKeyRE = regexp.MustCompile(`map has no entry for key "([^"]*)"`)

// Render executes one asset as a Go template with missingkey=error; a missing key names the file
// and the key so a stale release JSON is obvious.
func Render(name string, data []byte, params map[string]any) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"Dir":       path.Dir,
		"Sha256sum": Sha256sum,
	}).Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("parsing template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, params); err != nil {
		if m := missingKeyRE.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("rendering %s: missing key %q (is it in the release JSON?): %w", name, m[1], err)
		}
		return nil, fmt.Errorf("rendering %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// typedScheme is client-go's built-in kinds, copied on first use: building it takes ~4 ms,
// which every start of the lvms-rebase CLI (which links the applier) paid at init whether or
// not it applied anything.
var typedScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
})

// IsBuiltin reports whether gvk is a kind of client-go's scheme (not a custom resource).
func IsBuiltin(gvk schema.GroupVersionKind) bool {
	_, err := typedScheme().New(gvk)
	return err == nil
}

// Sanitize round-trips objects of built-in kinds through their Go types, which drops fields the
// API does not have (the CSV-derived assets carry a Deployment `label:` map and
// `roleRef.namespace`). Applying and comparing the typed form means the live object can be
// compared with what was sent. Zero metav1.Time fields (creationTimestamp, also in pod
// templates) marshal as null; a null in an apply configuration is noise at best, so none are
// sent (jsonvalue.FromTyped).
func Sanitize(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := u.GroupVersionKind()
	typed, err := typedScheme().New(gvk)
	if err != nil {
		// CRDs and custom resources: applied as written, minus what the API server owns or
		// drops (status, nulls such as creationTimestamp), so the live object can contain it.
		out := u.DeepCopy()
		delete(out.Object, "status")
		jsonvalue.PruneNulls(out.Object)
		return out, nil
	}
	if err := jsonvalue.ToTyped(u.Object, typed); err != nil {
		return nil, fmt.Errorf("decoding %s as %s: %w", RefOf(u), gvk, err)
	}
	m, err := jsonvalue.FromTyped(typed)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", RefOf(u), err)
	}
	delete(m, "status")
	out := &unstructured.Unstructured{Object: m}
	out.SetGroupVersionKind(gvk)
	return out, nil
}

// KindRank is kind's place in the declared apply order (eras.KindOrder); -1 when it has none.
func KindRank(kind string) int { return eras.KindRank(kind) }

// Kinds lists every kind the apply order places, in that order.
func Kinds() []string { return eras.KindOrder() }

// IsCreateOnly reports whether objects of kind are created when absent and never updated.
func IsCreateOnly(kind string) bool { return slices.Contains(createOnlyKinds, kind) }

// Sha256sum is the hex SHA-256 of s: the templates' Sha256sum function, so the pod-template
// checksum and the applier's LvmdChecksum are the same digest.
func Sha256sum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// StripComments drops comment, blank and document-marker lines, so an empty document (or lvmd
// file) is recognised whatever comments it carries.
func StripComments(data []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			out = append(out, line...)
		}
	}
	return out
}
