// Package version holds the build version of lvms-rebase.
package version

// Version is set at link time with
// -ldflags "-X github.com/lvms-rebase/lvms-rebase/internal/version.Version=$(git describe)".
// It stays "dev" for plain `go build` and `go test`.
var Version = "dev"
