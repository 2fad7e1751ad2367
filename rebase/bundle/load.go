// Package bundle reads an unpacked LVMS operator bundle (manifests/ and metadata/) into a typed
// ClusterServiceVersion plus its other manifests, and translates it into the plain objects
// MicroShift ships: what OLM would install from the CSV, minus OLM.
package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// Bundle directory layout (operator-framework registry+v1).
const (
	ManifestsDir    = "manifests"
	MetadataDir     = "metadata"
	AnnotationsFile = "metadata/annotations.yaml"
	// PackageAnnotation names the bundle's package in annotations.yaml.
	PackageAnnotation = "operators.operatorframework.io.bundle.package.v1"
	// SuggestedNamespaceAnnotation is the CSV annotation suggesting the install namespace.
	SuggestedNamespaceAnnotation = "operatorframework.io/suggested-namespace"
)

// Object is one non-CSV manifest of the bundle with the file it came from.
type Object struct {
	// File is the path relative to the bundle root, e.g. manifests/foo_v1_service.yaml.
	File   string
	Object *unstructured.Unstructured
}

// Bundle is a parsed bundle directory.
type Bundle struct {
	// CSV is the typed ClusterServiceVersion.
	CSV *v1alpha1.ClusterServiceVersion
	// CSVFile is the CSV's path relative to the bundle root.
	CSVFile string
	// Version is the CSV's spec.version (e.g. 4.18.4).
	Version string
	// Objects are the other manifests in file-name order.
	Objects []Object
	// Annotations is metadata/annotations.yaml's annotations map.
	Annotations map[string]string
}

// Load reads a bundle directory holding manifests/ and metadata/. Errors name the file and
// field at fault.
func Load(dir string) (*Bundle, error) {
	b, err := LoadFS(safefile.FS(dir))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	return b, nil
}

// LoadFS is Load over a file system rooted at the bundle directory.
func LoadFS(fsys fs.FS) (*Bundle, error) {
	entries, err := fs.ReadDir(fsys, ManifestsDir)
	if err != nil {
		return nil, fmt.Errorf("reading %s/: %w", ManifestsDir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })

	b := &Bundle{}
	var csvObj *unstructured.Unstructured
	var csvData []byte
	var all []*unstructured.Unstructured
	for _, ent := range entries {
		// Same skips as operator-registry: subdirectories and dotfiles are not manifests.
		if ent.IsDir() || strings.HasPrefix(ent.Name(), ".") || !ent.Type().IsRegular() {
			continue
		}
		file := path.Join(ManifestsDir, ent.Name())
		data, err := safefile.ReadFS(fsys, file, 0)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		obj, err := decodeOne(data)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", file, err)
		}
		if obj == nil {
			continue // empty file
		}
		if obj.GetKind() == "" {
			return nil, fmt.Errorf("%s: field kind is empty", file)
		}
		if obj.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s: field apiVersion is empty", file)
		}
		all = append(all, obj)
		if obj.GetKind() == v1alpha1.ClusterServiceVersionKind {
			if csvObj != nil {
				return nil, fmt.Errorf("two ClusterServiceVersions: %s and %s (expected exactly one)", b.CSVFile, file)
			}
			csvObj, csvData, b.CSVFile = obj, data, file
			continue
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("%s: %s has no metadata.name", file, obj.GetKind())
		}
		b.Objects = append(b.Objects, Object{File: file, Object: obj})
	}
	if csvObj == nil {
		return nil, fmt.Errorf("no ClusterServiceVersion (kind %s) in %s/", v1alpha1.ClusterServiceVersionKind, ManifestsDir)
	}
	csv, err := ParseCSV(csvData)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.CSVFile, err)
	}
	b.CSV = csv
	b.Version = csv.Spec.Version.String()

	b.Annotations, err = readAnnotations(fsys)
	if err != nil {
		return nil, err
	}

	if err := ownedCRDsInBundle(csv, all); err != nil {
		return nil, fmt.Errorf("%s: spec.customresourcedefinitions.owned: %w", b.CSVFile, err)
	}
	return b, nil
}

// apiKey names one served API: group, version, kind and plural (operator-registry's APIKey).
type apiKey struct{ group, version, kind, plural string }

// ownedCRDsInBundle is operator-registry's AllProvidedAPIsInBundle, the consistency check OLM
// tooling runs: every CRD the CSV owns (named plural.group, with a kind and version) is shipped
// by the bundle, or is an API service the CSV owns. It is a few lines over the CRD fields, so
// the tool does not link operator-registry for it.
func ownedCRDsInBundle(csv *v1alpha1.ClusterServiceVersion, objs []*unstructured.Unstructured) error {
	provided := map[apiKey]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != apiextensionsv1.Kind("CustomResourceDefinition") {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		for _, v := range versions {
			if m, ok := v.(map[string]interface{}); ok {
				name, _ := m["name"].(string)
				provided[apiKey{group, name, kind, plural}] = true
			}
		}
		// apiextensions.k8s.io/v1beta1 CRDs may name a single spec.version instead.
		if v, _, _ := unstructured.NestedString(o.Object, "spec", "version"); v != "" {
			provided[apiKey{group, v, kind, plural}] = true
		}
	}
	for _, a := range csv.Spec.APIServiceDefinitions.Owned {
		provided[apiKey{a.Group, a.Version, a.Kind, a.Name}] = true
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		plural, group, ok := strings.Cut(d.Name, ".")
		if !ok {
			return fmt.Errorf("name %q: expected plural.group", d.Name)
		}
		if !provided[apiKey{group, d.Version, d.Kind, plural}] {
			return fmt.Errorf("owned CRD %s (kind %s, version %s) is not in the bundle's %s/", d.Name, d.Kind, d.Version, ManifestsDir)
		}
	}
	return nil
}

// decodeOne decodes a YAML or JSON manifest holding exactly one object; nil for an empty file.
func decodeOne(data []byte) (*unstructured.Unstructured, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var first map[string]interface{}
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if m == nil {
			continue // empty document (e.g. a leading ---)
		}
		if first != nil {
			return nil, fmt.Errorf("more than one document (expected one object per file)")
		}
		first = m
	}
	if first == nil {
		return nil, nil
	}
	return &unstructured.Unstructured{Object: jsonvalue.Normalize(first).(map[string]interface{})}, nil
}

// ParseCSV decodes and checks a ClusterServiceVersion: spec.version is set, the install
// strategy is "deployment", every deployment has a name, and every webhook definition names
// one of those deployments and has a known type.
func ParseCSV(data []byte) (*v1alpha1.ClusterServiceVersion, error) {
	var csv v1alpha1.ClusterServiceVersion
	if err := yaml.Unmarshal(data, &csv); err != nil {
		return nil, fmt.Errorf("decoding ClusterServiceVersion: %w", err)
	}
	if csv.Kind != v1alpha1.ClusterServiceVersionKind {
		return nil, fmt.Errorf("field kind is %q, expected %s", csv.Kind, v1alpha1.ClusterServiceVersionKind)
	}
	if csv.Name == "" {
		return nil, fmt.Errorf("field metadata.name is empty")
	}
	var raw struct {
		Spec struct {
			Version *string `json:"version"`
		} `json:"spec"`
	}
	// The typed version decodes a missing field as 0.0.0; look at the raw field instead.
	if err := yaml.Unmarshal(data, &raw); err != nil || raw.Spec.Version == nil || *raw.Spec.Version == "" {
		return nil, fmt.Errorf("field spec.version is missing")
	}
	if csv.Spec.InstallStrategy.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		return nil, fmt.Errorf("field spec.install.strategy is %q, expected %q", csv.Spec.InstallStrategy.StrategyName, v1alpha1.InstallStrategyNameDeployment)
	}
	if len(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs) == 0 {
		return nil, fmt.Errorf("field spec.install.spec.deployments is empty: missing deployment")
	}
	deps := map[string]bool{}
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d.Name == "" {
			return nil, fmt.Errorf("field spec.install.spec.deployments[%d].name is empty", i)
		}
		if deps[d.Name] {
			return nil, fmt.Errorf("field spec.install.spec.deployments[%d].name: duplicate deployment %q", i, d.Name)
		}
		deps[d.Name] = true
	}
	for _, p := range []struct {
		field string
		perms []v1alpha1.StrategyDeploymentPermissions
	}{
		{"clusterPermissions", csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions},
		{"permissions", csv.Spec.InstallStrategy.StrategySpec.Permissions},
	} {
		for i, perm := range p.perms {
			if perm.ServiceAccountName == "" {
				return nil, fmt.Errorf("field spec.install.spec.%s[%d].serviceAccountName is empty", p.field, i)
			}
		}
	}
	for i, w := range csv.Spec.WebhookDefinitions {
		switch w.Type {
		case v1alpha1.ValidatingAdmissionWebhook, v1alpha1.MutatingAdmissionWebhook:
		case v1alpha1.ConversionWebhook:
			// Conversion webhooks live on CRDs; LVMS has none and MicroShift would need its
			// own wiring for them.
			return nil, fmt.Errorf("field spec.webhookdefinitions[%d].type %q is not supported (expected %s or %s)", i, w.Type, v1alpha1.ValidatingAdmissionWebhook, v1alpha1.MutatingAdmissionWebhook)
		default:
			return nil, fmt.Errorf("field spec.webhookdefinitions[%d].type is %q, expected %s or %s", i, w.Type, v1alpha1.ValidatingAdmissionWebhook, v1alpha1.MutatingAdmissionWebhook)
		}
		if w.GenerateName == "" {
			return nil, fmt.Errorf("field spec.webhookdefinitions[%d].generateName is empty", i)
		}
		if !deps[w.DeploymentName] {
			return nil, fmt.Errorf("field spec.webhookdefinitions[%d].deploymentName %q: missing deployment (not in spec.install.spec.deployments)", i, w.DeploymentName)
		}
	}
	return &csv, nil
}

func readAnnotations(fsys fs.FS) (map[string]string, error) {
	data, err := safefile.ReadFS(fsys, AnnotationsFile, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", AnnotationsFile, err)
	}
	var af struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &af); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", AnnotationsFile, err)
	}
	if len(af.Annotations) == 0 {
		return nil, fmt.Errorf("%s: field annotations is empty", AnnotationsFile)
	}
	if af.Annotations[PackageAnnotation] == "" {
		return nil, fmt.Errorf("%s: field annotations.%s is empty", AnnotationsFile, PackageAnnotation)
	}
	return af.Annotations, nil
}
