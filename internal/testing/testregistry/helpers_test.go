package testregistry_test

import (
	"encoding/json"
	"io/fs"
	"testing/fstest"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// fstestEmpty is a fixture tree with an images/ directory but no layouts.
type fstestEmpty struct{}

func (fstestEmpty) Open(name string) (fs.File, error) {
	return fstest.MapFS{"images/README.md": {Data: []byte("empty")}}.Open(name)
}
