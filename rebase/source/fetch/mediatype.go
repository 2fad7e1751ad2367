package fetch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// A registry says what a manifest or a blob is twice: in the media type it declares (the
// Content-Type of a manifest, the mediaType of the descriptor naming it) and in the bytes
// themselves (a manifest's own mediaType field and its shape, a layer's compression). Where
// the two disagree the content is not what the registry claims, and acting on either would
// read it as something it is not (an image manifest parsed as an index has no entries; a
// layer said to be gzip that is zstd or plain is decompressed by guesswork): the fetch stops
// naming the reference, the declared and the actual type.

// MediaTypeError is content whose declared media type contradicts what it is.
type MediaTypeError struct {
	// Ref is the image reference; What the manifest or layer ("layer sha256:…").
	Ref, What string
	// Declared is the media type the registry (or a descriptor) declared; Actual what the
	// content is.
	Declared, Actual string
}

func (e *MediaTypeError) Error() string {
	return fmt.Sprintf("%s: %s: declared media type %s, but the content is %s (the media type lies)", e.Ref, e.What, e.Declared, e.Actual)
}

// manifestKind is "index" or "image" for the manifest media types a pull reads, "" for any
// other (an undeclared type, application/json, a config or layer type).
func manifestKind(mt types.MediaType) string {
	switch mt {
	case types.OCIImageIndex, types.DockerManifestList:
		return "index"
	case types.OCIManifestSchema1, types.DockerManifestSchema2:
		return "image"
	}
	return ""
}

// manifestShape reads a manifest's own mediaType field and its shape: "index" for a
// manifests list, "image" for a config and layers, "both" or "" for neither.
func manifestShape(raw []byte) (field types.MediaType, shape string) {
	var probe struct {
		MediaType types.MediaType `json:"mediaType"`
		Manifests json.RawMessage `json:"manifests"`
		Layers    json.RawMessage `json:"layers"`
		Config    json.RawMessage `json:"config"`
	}
	_ = json.Unmarshal(raw, &probe)
	has := func(m json.RawMessage) bool {
		t := bytes.TrimSpace(m)
		return len(t) > 0 && !bytes.Equal(t, []byte("null"))
	}
	idx, img := has(probe.Manifests), has(probe.Layers) || has(probe.Config)
	switch {
	case idx && img:
		shape = "both"
	case idx:
		shape = "index"
	case img:
		shape = "image"
	}
	return probe.MediaType, shape
}

// describeShape says what a manifest's shape makes it.
func describeShape(shape string) string {
	switch shape {
	case "index":
		return "an index (a manifests list)"
	case "image":
		return "an image manifest (a config and layers)"
	case "both":
		return "both an index and an image manifest (manifests and layers)"
	}
	return "neither an index nor an image manifest"
}

// checkManifest returns the media type of the manifest raw, refusing a declared type (a
// Content-Type, an index or layout descriptor's mediaType) that contradicts its own mediaType
// field or its shape, and a mediaType field that contradicts the shape. A declared type that
// is no manifest type (empty, application/json) is not checked: some registries send no
// better. A manifest that says nothing is read by its shape (an index when it lists
// manifests, else an OCI image manifest).
func checkManifest(ref, what string, declared types.MediaType, raw []byte) (types.MediaType, error) {
	field, shape := manifestShape(raw)
	lie := func(declared types.MediaType, actual string) error {
		return &MediaTypeError{Ref: ref, What: what, Declared: string(declared), Actual: actual}
	}
	if shape == "both" || (field != "" && manifestKind(field) != "" && shape != "" && manifestKind(field) != shape) {
		return "", lie(field, describeShape(shape))
	}
	if kind := manifestKind(declared); kind != "" {
		switch {
		case field != "" && field != declared:
			return "", lie(declared, "a manifest whose mediaType is "+string(field))
		case field == "" && shape != "" && shape != kind:
			return "", lie(declared, describeShape(shape))
		case field == "":
			return declared, nil
		}
	}
	switch {
	case field != "":
		return field, nil
	case shape == "index":
		return types.OCIImageIndex, nil
	}
	return types.OCIManifestSchema1, nil
}

// Layer compressions, as a layer's media type declares them and its first bytes show.
const (
	gzipped      = "gzip-compressed"
	zstdCompress = "zstd-compressed"
	uncompressed = "uncompressed"
)

// declaredCompression is the compression a layer media type names; ok is false for a type
// that names no layer.
func declaredCompression(mt types.MediaType) (string, bool) {
	s := string(mt)
	switch {
	case strings.HasSuffix(s, "+gzip") || strings.HasSuffix(s, ".tar.gzip"):
		return gzipped, true
	case strings.HasSuffix(s, "+zstd"):
		return zstdCompress, true
	case strings.HasSuffix(s, ".tar"):
		return uncompressed, true
	}
	return "", false
}

// sniffCompression names the compression of a blob by its first bytes.
func sniffCompression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return gzipped
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return zstdCompress
	}
	return uncompressed
}

// checkLayer refuses a layer whose first bytes contradict the media type its manifest
// declares (or whose media type names no layer).
func checkLayer(ref string, d v1.Descriptor, head []byte) error {
	got := sniffCompression(head)
	want, ok := declaredCompression(d.MediaType)
	switch {
	case !ok:
		return &MediaTypeError{Ref: ref, What: "layer " + d.Digest.String(), Declared: string(d.MediaType), Actual: "a " + got + " layer (the declared type is no layer type)"}
	case want != got:
		return &MediaTypeError{Ref: ref, What: "layer " + d.Digest.String(), Declared: string(d.MediaType), Actual: got}
	}
	return nil
}
