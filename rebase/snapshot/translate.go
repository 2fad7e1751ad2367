package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
	"github.com/lvms-rebase/lvms-rebase/rebase/render"
)

// Origin says where an output object comes from and which MicroShift file it is.
type Origin struct {
	// File is the MicroShift file name under assets/components/csi-snapshot-controller/.
	File string
	// Source is the operator file it came from.
	Source string
	// Doc is the object's document index in Source (0 for single-object files).
	Doc int
	// AggregateOnly: the object is shipped only inside its kept multi-document file, the
	// era does not split its kind out (era.SnapshotSplit).
	AggregateOnly bool
}

// Aggregate is a multi-document MicroShift file kept whole (a source's Keep).
type Aggregate struct {
	// File is the MicroShift file name under assets/components/csi-snapshot-controller/.
	File string
	// Source is the operator file it mirrors.
	Source string
	// Members are the objects (indexes into Result.Objects) in document order.
	Members []int
}

// Result is the translated snapshot assets: the operator's objects as upstream writes them
// (template values filled), which the era's overlay (Era.SnapshotOverlay) then patches into
// what MicroShift ships.
type Result struct {
	// Commit is the operator commit the assets came from.
	Commit string
	// Objects in source table order (split sources in document order).
	Objects []*unstructured.Unstructured
	// Origins[i] describes Objects[i].
	Origins []Origin
	// Skipped lists webhook sources left out because the era does not ship the webhook.
	Skipped []string
	// Aggregates are the multi-document files shipped besides their split objects.
	Aggregates []Aggregate
}

// templateValues are the upstream template variables the translation fills, by substring:
// kustomize replaces whole values, and the operator embeds these inside strings
// ("--v=${LOG_LEVEL}"). Every other variable (${CONTROLPLANE_NAMESPACE}, ${OPERAND_IMAGE},
// ${PRIORITY_CLASS}, ${RELEASE_VERSION}) is patched away by the era's overlay; render
// refuses one that survives it.
var templateValues = []struct{ variable, value string }{
	// MicroShift logs at level 2 (rebase.sh's `--v=2`); the controller's arguments are
	// replaced wholesale by the overlay, the webhook keeps upstream's with this filled in.
	{"${LOG_LEVEL}", "2"},
}

// Translate reads the operator files the source table names for era e: each becomes one
// object per document, with the template values filled, and its MicroShift file name. Every
// listed source must exist; a kind of a split source without a file name is an error.
// What MicroShift changes in the objects is the era's kustomize overlay's job (render).
func Translate(a *Assets, e era.Era) (*Result, error) {
	res := &Result{Commit: a.Commit}
	for _, src := range sources {
		if src.Webhook && !e.SnapshotWebhook {
			res.Skipped = append(res.Skipped, src.Path)
			continue
		}
		if err := res.add(a, e, src); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// add translates one source file into res.
func (res *Result) add(a *Assets, e era.Era, src source) error {
	where := fmt.Sprintf("snapshot assets %s (commit %s)", a.Source, a.Commit)
	data, ok := a.Files[src.Path]
	if !ok {
		return fmt.Errorf("%s: missing %s", where, src.Path)
	}
	docs, err := decodeAll(data)
	if err != nil {
		return fmt.Errorf("%s: decoding %s: %w", where, src.Path, err)
	}
	if !src.Multi && len(docs) != 1 {
		return fmt.Errorf("%s: %s holds %d objects, expected 1", where, src.Path, len(docs))
	}
	var agg *Aggregate
	if src.Keep != "" {
		res.Aggregates = append(res.Aggregates, Aggregate{File: src.Keep, Source: src.Path})
		agg = &res.Aggregates[len(res.Aggregates)-1]
	}
	seen := map[string]bool{}
	for docIdx, doc := range docs {
		kind, _ := doc["kind"].(string)
		meta, _ := doc["metadata"].(map[string]interface{})
		name, _ := meta["name"].(string)
		// A renamed single object is named as render names any object MicroShift does not
		// ship yet (the overlay then refuses the drift, naming its patch); a multi-document
		// source holds only what the table names.
		file, ok := render.SnapshotFile(kind, name)
		if !ok && src.Multi {
			return fmt.Errorf("%s: %s: kind %q (%s) has no MicroShift file in the snapshot name table (render.SnapshotFile)", where, src.Path, kind, name)
		}
		if !ok {
			apiVersion, _ := doc["apiVersion"].(string)
			var err error
			if file, err = render.DefaultFileName(apiVersion, kind, name); err != nil {
				return fmt.Errorf("%s: %s: %w", where, src.Path, err)
			}
		}
		if seen[file] {
			return fmt.Errorf("%s: %s: two objects for one file %s", where, src.Path, file)
		}
		seen[file] = true
		fillTemplateValues(doc)
		if agg != nil {
			agg.Members = append(agg.Members, len(res.Objects))
		}
		res.Objects = append(res.Objects, &unstructured.Unstructured{Object: doc})
		only := agg != nil && !slices.Contains(e.SnapshotSplit, kind)
		res.Origins = append(res.Origins, Origin{File: file, Source: src.Path, Doc: docIdx, AggregateOnly: only})
	}
	return nil
}

func decodeAll(data []byte) ([]map[string]interface{}, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []map[string]interface{}
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if m == nil {
			continue
		}
		if k, _ := m["kind"].(string); k == "" {
			return nil, fmt.Errorf("document %d has no kind", len(out)+1)
		}
		out = append(out, jsonvalue.Normalize(m).(map[string]interface{}))
	}
}

// fillTemplateValues replaces the template values in every string of v.
func fillTemplateValues(v interface{}) {
	fill := func(s string) string {
		for _, t := range templateValues {
			s = strings.ReplaceAll(s, t.variable, t.value)
		}
		return s
	}
	switch x := v.(type) {
	case map[string]interface{}:
		for k, val := range x {
			if s, ok := val.(string); ok {
				x[k] = fill(s)
			} else {
				fillTemplateValues(val)
			}
		}
	case []interface{}:
		for i, val := range x {
			if s, ok := val.(string); ok {
				x[i] = fill(s)
			} else {
				fillTemplateValues(val)
			}
		}
	}
}
