package testregistry_test

import (
	"testing"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// BenchmarkStart measures seeding the full embedded fixture set and starting to listen,
// which every e2e test pays once.
func BenchmarkStart(b *testing.B) {
	fsys := fixtureFS(b)
	for i := 0; i < b.N; i++ {
		r, err := testregistry.Start(testregistry.Options{Fixtures: fsys})
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
	}
}
