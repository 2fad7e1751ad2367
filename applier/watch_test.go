package applier

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// watchHarness runs WatchLvmd on a temporary directory and hands out its syncs.
type watchHarness struct {
	t             *testing.T
	user, runtime string
	syncs         chan LvmdSync
}

// watchHost is the harness's host: the volume groups and the thin pool the test files name,
// and MicroShift's default volume group, which the defaults pick.
var watchHost = fakeHost{vgs: []string{"microshift", "vg1", "vg2"}, pools: []ThinPool{{"vg2", "pool"}}}

func startWatch(t *testing.T, initial string) *watchHarness {
	t.Helper()
	return startWatchOn(t, initial, watchHost)
}

func startWatchOn(t *testing.T, initial string, host VolumeGroupLister) *watchHarness {
	t.Helper()
	dir := t.TempDir()
	h := &watchHarness{t: t, user: filepath.Join(dir, "etc", "lvmd.yaml"), runtime: filepath.Join(dir, "var", "lvmd.yaml"), syncs: make(chan LvmdSync, 16)}
	if err := os.MkdirAll(filepath.Dir(h.user), 0o755); err != nil {
		t.Fatal(err)
	}
	if initial != "" {
		h.write(initial)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- WatchLvmd(ctx, WatchOptions{
			LvmdPath: h.user, RuntimeLvmdPath: h.runtime, VolumeGroups: host,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Debounce: 300 * time.Millisecond,
			OnSync: func(s LvmdSync) { h.syncs <- s },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchLvmd: %v", err)
		}
	})
	return h
}

func (h *watchHarness) write(data string) {
	h.t.Helper()
	if err := os.WriteFile(h.user, []byte(data), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// next waits for the next sync.
func (h *watchHarness) next() LvmdSync {
	h.t.Helper()
	select {
	case s := <-h.syncs:
		return s
	case <-time.After(10 * time.Second):
		h.t.Fatal("no sync within 10s of a file event")
		return LvmdSync{}
	}
}

func (h *watchHarness) runtimeCopy() string {
	h.t.Helper()
	b, err := os.ReadFile(h.runtime)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

const (
	goodLvmd  = "# the user's comment stays\ndevice-classes:\n- name: ssd\n  volume-group: vg1\n  default: true\n"
	otherLvmd = "device-classes:\n- name: thin\n  volume-group: vg2\n  default: true\n  type: thin\n  thin-pool:\n    name: pool\n    overprovision-ratio: 10\n"
)

// Real file-system events: an edit is copied as written; an invalid edit keeps the last good copy
// and reports the field; an editor's delete + re-create is one change, not a fallback to the
// defaults; a removal that stays falls back to the defaults.
func TestWatchLvmd(t *testing.T) {
	h := startWatch(t, goodLvmd)
	if s := h.next(); s.Err != nil || !s.Written || h.runtimeCopy() != goodLvmd {
		t.Fatalf("initial sync %+v, copy %q", s, h.runtimeCopy())
	}

	h.write(otherLvmd)
	if s := h.next(); s.Err != nil || !s.Written || h.runtimeCopy() != otherLvmd {
		t.Fatalf("after an edit: sync %+v, copy %q", s, h.runtimeCopy())
	}

	h.write("device-classes:\n- name: thin\n  volume-group: vg2\n  default: true\n  spare-gb: many\n")
	s := h.next()
	var le *LvmdError
	if !errors.As(s.Err, &le) || le.Field != "device-classes[0].spare-gb" || s.Written {
		t.Fatalf("invalid edit: sync %+v, want an *LvmdError for device-classes[0].spare-gb", s)
	}
	if h.runtimeCopy() != otherLvmd {
		t.Fatalf("invalid edit replaced the last good copy: %q", h.runtimeCopy())
	}

	// An editor that deletes and re-creates the file within the debounce window.
	if err := os.Remove(h.user); err != nil {
		t.Fatal(err)
	}
	h.write(goodLvmd)
	if s := h.next(); s.Err != nil || s.Source.Path != h.user || h.runtimeCopy() != goodLvmd {
		t.Fatalf("delete + re-create: sync %+v, copy %q", s, h.runtimeCopy())
	}

	// An editor that writes a temporary file and renames it over the original.
	tmp := h.user + ".swp"
	if err := os.WriteFile(tmp, []byte(otherLvmd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h.user); err != nil {
		t.Fatal(err)
	}
	if s := h.next(); s.Err != nil || h.runtimeCopy() != otherLvmd {
		t.Fatalf("rename over: sync %+v, copy %q", s, h.runtimeCopy())
	}

	if err := os.Remove(h.user); err != nil {
		t.Fatal(err)
	}
	s = h.next()
	if s.Err != nil || s.Source.Path != "" || !strings.Contains(h.runtimeCopy(), "volume-group: microshift") {
		t.Fatalf("removal: sync %+v, copy %q, want the defaults for vg microshift", s, h.runtimeCopy())
	}
	if st, _ := os.Stat(h.runtime); st.Mode().Perm() != 0o600 {
		t.Errorf("default copy mode %o, want 0600", st.Mode().Perm())
	}
}

// Without a user file at start the defaults are written; a later file replaces them.
func TestWatchLvmdStartsFromDefaults(t *testing.T) {
	h := startWatch(t, "")
	if s := h.next(); s.Err != nil || !strings.Contains(h.runtimeCopy(), "volume-group: microshift") {
		t.Fatalf("initial sync %+v, copy %q", s, h.runtimeCopy())
	}
	h.write(goodLvmd)
	if s := h.next(); s.Err != nil || h.runtimeCopy() != goodLvmd {
		t.Fatalf("new file: sync %+v, copy %q", s, h.runtimeCopy())
	}
}

// noLVM is a host without the LVM tools.
type noLVM struct{}

func (noLVM) VolumeGroups(context.Context) ([]string, error) { return nil, ErrNoLVM }

// An edit naming a volume group or thin pool the host lacks is refused like an invalid one
// (vg-manager would fail on it): the last good copy stays and the field is named. A host
// without LVM runs no storage, so there an edit is copied unchecked.
func TestWatchLvmdRefusesWhatTheHostLacks(t *testing.T) {
	for _, tc := range []struct {
		name, edit string
		host       VolumeGroupLister
		field      string // "" when the edit is copied
	}{
		{"missing volume group", strings.ReplaceAll(goodLvmd, "vg1", "vg3"), watchHost, "device-classes[0].volume-group"},
		{"missing thin pool", strings.ReplaceAll(otherLvmd, "name: pool", "name: pool2"), watchHost, "device-classes[0].thin-pool.name"},
		{"thin pool in another volume group", strings.ReplaceAll(otherLvmd, "vg2", "vg1"), watchHost, "device-classes[0].thin-pool.name"},
		{"what the host has", otherLvmd, watchHost, ""},
		{"no LVM on the host", strings.ReplaceAll(goodLvmd, "vg1", "vg3"), noLVM{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startWatchOn(t, goodLvmd, tc.host)
			if s := h.next(); s.Err != nil || h.runtimeCopy() != goodLvmd {
				t.Fatalf("initial sync %+v, copy %q", s, h.runtimeCopy())
			}
			h.write(tc.edit)
			s := h.next()
			if tc.field == "" {
				if s.Err != nil || h.runtimeCopy() != tc.edit {
					t.Fatalf("edit: sync %+v, copy %q, want the edit copied", s, h.runtimeCopy())
				}
				return
			}
			var le *LvmdError
			if !errors.As(s.Err, &le) || le.Field != tc.field || s.Written {
				t.Fatalf("edit: sync %+v, want an *LvmdError for %s", s, tc.field)
			}
			if h.runtimeCopy() != goodLvmd {
				t.Fatalf("a refused edit replaced the last good copy: %q", h.runtimeCopy())
			}
		})
	}
}

func TestWatchLvmdMissingDirectory(t *testing.T) {
	err := WatchLvmd(context.Background(), WatchOptions{LvmdPath: filepath.Join(t.TempDir(), "nope", "lvmd.yaml")})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("WatchLvmd on a missing directory: %v, want an error naming it", err)
	}
}
