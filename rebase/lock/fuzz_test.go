package lock

import (
	"bytes"
	"os"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the lock parser: it must not panic, and whatever it
// accepts must survive Marshal and parse back to the same bytes (a lock that --check reads
// is one it could have written).
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/golden/4.18/scripts/auto-rebase/lvms-rebase.lock.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("apiVersion: lvms-rebase.microshift.io/v1alpha1\nkind: RebaseLock\n"))
	f.Add([]byte("files: [{path: ../x, sha256: 00}]\n"))
	f.Add([]byte("bundle: {ref: a, digest: sha256:zz}\nbundle: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("a parsed lock does not marshal: %v", err)
		}
		l2, err := Parse(out)
		if err != nil {
			t.Fatalf("a marshalled lock does not parse: %v\n%s", err, out)
		}
		out2, err := l2.Marshal()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("marshal is not stable: %v\n%s\n---\n%s", err, out, out2)
		}
		_ = Compare(l, l2)
	})
}
