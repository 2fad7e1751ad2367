package auth

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Two keys naming the same registry ("quay.io", "https://quay.io") must resolve the same
// way every time, not by map iteration order.
func TestAuthLookupDeterministic(t *testing.T) {
	c := &authConfigFile{Auths: map[string]authEntry{
		"https://quay.io": {Username: "scheme"},
		"quay.io":         {Username: "plain"},
		"quay.io/":        {Username: "slash"},
		"http://quay.io":  {Username: "http"},
	}}
	first, _ := lookup(c, "quay.io/openshift-release-dev/ocp-release")
	for i := 0; i < 200; i++ {
		if e, _ := lookup(c, "quay.io/openshift-release-dev/ocp-release"); e != first {
			t.Fatalf("lookup gave %q then %q", first.Username, e.Username)
		}
	}
	if first.Username != "plain" {
		t.Errorf("lookup chose %q, want the key spelled exactly as the registry", first.Username)
	}
}

// TestExplicitFileMustBeRegular: an auth file named explicitly that is a FIFO, a device
// (through a link) or a directory is refused when the keychain is made, naming it, even when
// the run would never ask for credentials (a warm cache: --check passed over a FIFO).
func TestExplicitFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(regular, []byte(`{"auths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{fifo: "a named pipe (FIFO)", zero: "a character device", dir: "a directory"} {
		if _, err := New(p, nil); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s): %v, want an error naming it as %s", p, err, want)
		}
	}
	if _, err := New(regular, nil); err != nil {
		t.Errorf("New(regular file): %v", err)
	}
}
