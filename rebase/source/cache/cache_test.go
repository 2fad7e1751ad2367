package cache

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestPutGet: content is stored under its digest and read back verified; content that does
// not hash to the digest is refused and leaves nothing; an entry corrupted on disk reads as
// absent (and is removed) so the caller fetches it again.
func TestPutGet(t *testing.T) {
	good := []byte("layer bytes")
	h, _, err := v1.SHA256(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content []byte
		corrupt bool // overwrite the stored entry before reading
		wantErr bool
		wantHit bool
	}{
		{name: "stored and verified", content: good, wantHit: true},
		{name: "wrong content refused", content: []byte("other bytes"), wantErr: true},
		{name: "corrupted entry is a miss", content: good, corrupt: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(t.TempDir())
			p, n, err := c.Put(h, bytes.NewReader(tc.content))
			var dm *DigestMismatchError
			if tc.wantErr {
				if !errors.As(err, &dm) || n != int64(len(tc.content)) {
					t.Fatalf("Put = %q, %d, %v; want a DigestMismatchError after %d bytes", p, n, err, len(tc.content))
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.corrupt {
				if err := os.WriteFile(p, []byte("truncat"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := c.Get(h)
			if err != nil || (got != "") != tc.wantHit {
				t.Fatalf("Get = %q, %v; want hit %v", got, err, tc.wantHit)
			}
			if b, ok := c.ReadSmall(h); ok != tc.wantHit || (ok && !bytes.Equal(b, good)) {
				t.Fatalf("ReadSmall = %q, %v; want hit %v", b, ok, tc.wantHit)
			}
			if tc.corrupt {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Fatalf("corrupt entry left in place: %v", err)
				}
			}
		})
	}
}

// TestTagRecords: tag records start empty, keep every update, and live apart per
// repository.
func TestTagRecords(t *testing.T) {
	c := New(t.TempDir())
	if r, err := c.ReadTags("quay.io/a"); err != nil || len(r.Tags) != 0 || r.Digests == nil {
		t.Fatalf("empty record = %+v, %v", r, err)
	}
	for _, tag := range []string{"v1", "v2"} {
		if err := c.UpdateTags("quay.io/a", func(r *TagRecord) { r.Digests[tag] = "sha256:" + strings.Repeat(tag[1:], 64) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.UpdateTags("quay.io/a", func(r *TagRecord) { r.Tags = []string{"v1", "v2"} }); err != nil {
		t.Fatal(err)
	}
	r, err := c.ReadTags("quay.io/a")
	if err != nil || len(r.Digests) != 2 || len(r.Tags) != 2 || r.Repo != "quay.io/a" {
		t.Fatalf("record = %+v, %v", r, err)
	}
	if other, err := c.ReadTags("quay.io/b"); err != nil || len(other.Digests) != 0 {
		t.Fatalf("other repository = %+v, %v", other, err)
	}
}
