// Package payload reads the two files of an OpenShift release payload's release-manifests/
// directory that the rebase needs: image-references (an image.openshift.io/v1 ImageStream
// whose tags name every component image) and release-metadata (Cincinnati metadata carrying
// the payload version). It picks the CSI snapshot images of an era and the source commit of
// cluster-csi-snapshot-controller-operator, whose assets hold the snapshot manifests.
package payload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/gitcommit"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// Dir is the payload image's directory holding the files below.
const Dir = "release-manifests"

// File names inside release-manifests/.
const (
	ImageReferencesFile = "image-references"
	ReleaseMetadataFile = "release-metadata"
)

// SnapshotOperatorTag is the image-references tag whose build commit locates the
// snapshot controller assets.
const SnapshotOperatorTag = "cluster-csi-snapshot-controller-operator"

// CommitAnnotation is the image-references tag annotation carrying the source commit.
const CommitAnnotation = "io.openshift.build.commit.id"

// SourceLocationAnnotation is the image-references tag annotation carrying the source repository.
const SourceLocationAnnotation = "io.openshift.build.source-location"

// ImageStream is the subset of image.openshift.io/v1 ImageStream that image-references uses.
type ImageStream struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Tags []Tag `json:"tags"`
	} `json:"spec"`
}

// Tag is one component image of the payload.
type Tag struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
	From        *struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"from,omitempty"`
}

// Metadata is release-metadata (kind cincinnati-metadata-v0).
type Metadata struct {
	Kind     string   `json:"kind"`
	Version  string   `json:"version"`
	Previous []string `json:"previous"`
	Next     []string `json:"next,omitempty"`
	// Metadata is free-form, as oc decodes it.
	Metadata map[string]interface{} `json:"metadata,omitempty"`
}

// Payload is a parsed release-manifests/ directory.
type Payload struct {
	References *ImageStream
	Metadata   *Metadata
	// tags indexes References by tag name.
	tags map[string]*Tag
}

// ParseImageReferences decodes image-references. It checks the kind and that every tag has a
// name and a DockerImage reference, and rejects duplicate tag names.
func ParseImageReferences(data []byte) (*ImageStream, error) {
	var is ImageStream
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&is); err != nil {
		return nil, fmt.Errorf("decoding %s: expected ImageStream JSON: %w", ImageReferencesFile, err)
	}
	if is.Kind != "ImageStream" {
		return nil, fmt.Errorf("%s: kind is %q, expected ImageStream", ImageReferencesFile, is.Kind)
	}
	seen := map[string]bool{}
	for i, t := range is.Spec.Tags {
		if t.Name == "" {
			return nil, fmt.Errorf("%s: spec.tags[%d].name is empty", ImageReferencesFile, i)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("%s: spec.tags[%d]: duplicate tag %q", ImageReferencesFile, i, t.Name)
		}
		seen[t.Name] = true
		if t.From == nil || t.From.Name == "" {
			return nil, fmt.Errorf("%s: spec.tags[%d] (%s): from.name is empty", ImageReferencesFile, i, t.Name)
		}
		if t.From.Kind != "DockerImage" {
			return nil, fmt.Errorf("%s: spec.tags[%d] (%s): from.kind is %q, expected DockerImage", ImageReferencesFile, i, t.Name, t.From.Kind)
		}
	}
	return &is, nil
}

// ParseMetadata decodes release-metadata and checks it carries a version.
func ParseMetadata(data []byte) (*Metadata, error) {
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decoding %s: expected cincinnati-metadata-v0 JSON: %w", ReleaseMetadataFile, err)
	}
	if m.Kind != "cincinnati-metadata-v0" {
		return nil, fmt.Errorf("%s: kind is %q, expected cincinnati-metadata-v0", ReleaseMetadataFile, m.Kind)
	}
	if m.Version == "" {
		return nil, fmt.Errorf("%s: version is empty", ReleaseMetadataFile)
	}
	return &m, nil
}

// New builds a Payload from parsed parts.
func New(refs *ImageStream, meta *Metadata) *Payload {
	p := &Payload{References: refs, Metadata: meta, tags: map[string]*Tag{}}
	for i := range refs.Spec.Tags {
		p.tags[refs.Spec.Tags[i].Name] = &refs.Spec.Tags[i]
	}
	return p
}

// Load reads image-references and release-metadata from dir (an extracted
// release-manifests/ directory).
func Load(dir string) (*Payload, error) {
	p, err := LoadFS(safefile.FS(dir))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

// LoadFS is Load over a file system rooted at release-manifests/; errors name the files
// by their names there.
func LoadFS(fsys fs.FS) (*Payload, error) {
	return parse(func(name string) ([]byte, error) {
		data, err := safefile.ReadFS(fsys, name, 0)
		if err != nil {
			return nil, fmt.Errorf("reading payload file %s: %w", name, err)
		}
		return data, nil
	})
}

// parse reads and decodes the two files through read.
func parse(read func(name string) ([]byte, error)) (*Payload, error) {
	refData, err := read(ImageReferencesFile)
	if err != nil {
		return nil, err
	}
	refs, err := ParseImageReferences(refData)
	if err != nil {
		return nil, err
	}
	metaData, err := read(ReleaseMetadataFile)
	if err != nil {
		return nil, err
	}
	meta, err := ParseMetadata(metaData)
	if err != nil {
		return nil, err
	}
	return New(refs, meta), nil
}

// Version is the payload version from release-metadata (e.g. 4.18.7).
func (p *Payload) Version() string {
	return p.Metadata.Version
}

// Image returns the pull spec of an image-references tag.
func (p *Payload) Image(tag string) (string, bool) {
	t, ok := p.tags[tag]
	if !ok {
		return "", false
	}
	return t.From.Name, true
}

// Tag returns an image-references tag with its annotations.
func (p *Payload) Tag(name string) (*Tag, bool) {
	t, ok := p.tags[name]
	return t, ok
}

// SnapshotOperatorCommit is the source commit of cluster-csi-snapshot-controller-operator
// recorded in image-references; its assets/ at that commit are the snapshot manifests.
func (p *Payload) SnapshotOperatorCommit() (string, error) {
	c, err := snapshotOperatorCommit(p.tags[SnapshotOperatorTag])
	if err != nil {
		return "", fmt.Errorf("payload %s: %w", p.Version(), err)
	}
	return c, nil
}

// SnapshotOperatorCommit is Payload.SnapshotOperatorCommit read from image-references alone
// (a payload whose release-metadata has not been read yet).
func (is *ImageStream) SnapshotOperatorCommit() (string, error) {
	for i := range is.Spec.Tags {
		if is.Spec.Tags[i].Name == SnapshotOperatorTag {
			return snapshotOperatorCommit(&is.Spec.Tags[i])
		}
	}
	return snapshotOperatorCommit(nil)
}

func snapshotOperatorCommit(t *Tag) (string, error) {
	if t == nil {
		return "", fmt.Errorf("%s has no tag %q", ImageReferencesFile, SnapshotOperatorTag)
	}
	c := strings.TrimSpace(t.Annotations[CommitAnnotation])
	if c == "" {
		return "", fmt.Errorf("%s tag %q has no %s annotation", ImageReferencesFile, SnapshotOperatorTag, CommitAnnotation)
	}
	if !gitcommit.Valid(c) {
		return "", fmt.Errorf("%s tag %q: %s %q is not a hex commit id", ImageReferencesFile, SnapshotOperatorTag, CommitAnnotation, c)
	}
	return c, nil
}

// Images returns, keyed by release-JSON key, the pull specs of the era's payload images. Every
// tag the era declares must be present: a missing one is an error naming all missing tags and
// the payload version.
func (p *Payload) Images(e era.Era) (map[string]string, error) {
	out := make(map[string]string, len(e.PayloadImages))
	var missing []string
	for _, k := range e.PayloadImages {
		ref, ok := p.Image(k.Name)
		if !ok {
			missing = append(missing, k.Name)
			continue
		}
		out[k.Key] = ref
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("payload %s: %s lacks tag(s) %s required by era %s", p.Version(), ImageReferencesFile, strings.Join(missing, ", "), e.Name)
	}
	return out, nil
}
