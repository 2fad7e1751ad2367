package embedded

import (
	"embed"
	"io/fs"
)

// MicroShift embeds "components controllers core crd version release"; the storage applier
// needs only components and release.
//
//go:embed components release
var content embed.FS

func Asset(name string) ([]byte, error) {
	return content.ReadFile(name)
}

func AssetStreamed(name string) (fs.File, error) {
	return content.Open(name)
}

// FS is the embedded assets tree, for the storage applier.
func FS() fs.FS {
	return content
}
