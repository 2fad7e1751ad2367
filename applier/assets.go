package applier

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/eras"
)

// Asset directories under assets/, as the rebase writes them.
const (
	storageDir  = "components/lvms"
	snapshotDir = "components/csi-snapshot-controller"
	releaseDir  = "release"
)

// component tells which gate an object belongs to.
type component int

const (
	compStorage component = iota
	compSnapshot
	compSnapshotController
	compSnapshotWebhook
)

// skippedFiles are shipped files the applier must not apply, with the reason.
var skippedFiles = map[string]string{
	// The operator's aggregate manifest duplicates clusterrole.yaml and clusterrolebinding.yaml,
	// and its leader-election Role is unused: the controller runs with --leader-election=false.
	snapshotDir + "/05_operand_rbac.yaml": "aggregate of the split RBAC files",
}

// snapshotWebhookObjects are the snapshot validation webhook's objects (4.14–4.17), declared in
// package eras: they are applied only when the webhook is requested and deleted otherwise, as
// 4.18 does (MicroShift's deleteCSIWebhook).
var snapshotWebhookObjects = eras.SnapshotWebhookObjects()

// applyOrder is the order of kinds after the CRDs (which always go first and are waited for):
// namespace, identities, RBAC, configuration, services, workloads, the LVMCluster, webhooks,
// classes. A kind not listed is an error, so a new kind in the assets gets a deliberate place.
//
// The LVMCluster is created before the operator's admission webhooks are registered. The
// rebase writes a namespaceSelector that really matches openshift-storage (the legacy one never
// matched), so a webhook registered first would reject the create until the lvms-operator pod
// serves it — and on a MicroShift node that pod cannot start before the CNI, which
// StartComponents applies after storage: start-up would deadlock. The LVMCluster has no spec
// and is create-only, so there is nothing for the webhooks to validate or default.
var applyOrder = []string{
	"CustomResourceDefinition",
	"Namespace",
	"ServiceAccount",
	"ClusterRole",
	"Role",
	"ClusterRoleBinding",
	"RoleBinding",
	"SecurityContextConstraints",
	"ConfigMap",
	"Service",
	"Deployment",
	"DaemonSet",
	"LVMCluster",
	"ValidatingWebhookConfiguration",
	"MutatingWebhookConfiguration",
	"CSIDriver",
	"StorageClass",
	"VolumeSnapshotClass",
}

// createOnlyKinds are created when absent and never updated: the LVMCluster belongs to the
// administrator once it exists.
var createOnlyKinds = []string{"LVMCluster"}

// object is one decoded asset document.
type object struct {
	file string
	comp component
	obj  *unstructured.Unstructured
}

func (o object) ref() ObjectRef { return refOf(o.obj) }

func refOf(u *unstructured.Unstructured) ObjectRef {
	gvk := u.GroupVersionKind()
	return ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// rawFile is one asset file before rendering.
type rawFile struct {
	path string
	comp component
	data []byte
}

// readAssets lists the YAML files of both components in name order.
func readAssets(fsys fs.FS) ([]rawFile, error) {
	var files []rawFile
	for _, d := range []struct {
		dir  string
		comp component
	}{{snapshotDir, compSnapshot}, {storageDir, compStorage}} {
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
			if e.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				continue
			}
			if _, skip := skippedFiles[p]; skip {
				continue
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return nil, fmt.Errorf("reading asset %s: %w", p, err)
			}
			files = append(files, rawFile{path: p, comp: d.comp, data: data})
		}
		if len(files) == n {
			return nil, fmt.Errorf("assets: component directory %s has no YAML files (nothing applied or deleted)", d.dir)
		}
	}
	return files, nil
}

// peek decodes unrendered files (placeholders are quoted, so each file is valid YAML) to learn
// which objects the assets ship before any configuration is read.
func peek(files []rawFile) ([]ObjectRef, error) {
	var refs []ObjectRef
	for _, f := range files {
		docs, err := decodeDocs(f.path, f.data)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			refs = append(refs, refOf(d))
		}
	}
	return refs, nil
}

// decodeDocs splits a possibly multi-document file into objects; empty documents are skipped.
func decodeDocs(name string, data []byte) ([]*unstructured.Unstructured, error) {
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
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
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

// render executes one asset as a Go template with missingkey=error; a missing key names the file
// and the key so a stale release JSON is obvious.
func render(name string, data []byte, params map[string]any) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"Dir":       path.Dir,
		"Sha256sum": sha256sum,
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

var typedScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// sanitize round-trips objects of built-in kinds through their Go types, which drops fields the
// API does not have (the CSV-derived assets carry a Deployment `label:` map and
// `roleRef.namespace`). Applying and comparing the typed form means the live object can be
// compared with what was sent.
func sanitize(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := u.GroupVersionKind()
	typed, err := typedScheme.New(gvk)
	if err != nil {
		// CRDs and custom resources: applied as written, minus what the API server owns or
		// drops (status, nulls such as creationTimestamp), so the live object can contain it.
		out := u.DeepCopy()
		delete(out.Object, "status")
		dropNulls(out.Object)
		return out, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, fmt.Errorf("decoding %s as %s: %w", refOf(u), gvk, err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", refOf(u), err)
	}
	delete(m, "status")
	// Zero metav1.Time fields (creationTimestamp, also in pod templates) marshal as null; a null in
	// an apply configuration is noise at best, so none are sent.
	dropNulls(m)
	out := &unstructured.Unstructured{Object: m}
	out.SetGroupVersionKind(gvk)
	return out, nil
}

func kindRank(kind string) int { return slices.Index(applyOrder, kind) }

func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val == nil {
				delete(x, k)
				continue
			}
			dropNulls(val)
		}
	case []any:
		for _, val := range x {
			dropNulls(val)
		}
	}
}
