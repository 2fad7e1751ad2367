package lock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
)

// Compare lists where a recorded lock differs from the lock a re-render of its inputs
// produces, field by field, so that `--check` reports an edited lock as drift instead of "no
// changes". The tool version and the snapshot-assets source (a user may point --check at
// another copy of the same commit; its content is pinned by sha256 and per file) are not
// compared; the files and the snapshot files are, path by path. The LVMS choice of actual is
// the recorded rule applied again to the pinned bundle; how the payloads were chosen
// (payloadRule, payloadSource) is verified against the tree by the caller, which knows it.
func Compare(recorded, actual *Lock) []string {
	var out []string
	cmp := func(field string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			out = append(out, fmt.Sprintf("%s: the lock records %v, its inputs give %v", field, a, b))
		}
	}
	cmp("ocp", recorded.OCP, actual.OCP)
	cmp("era", recorded.Era, actual.Era)
	cmp("payloadVersion", recorded.PayloadVersion, actual.PayloadVersion)
	cmp("lvms", fmt.Sprintf("%+v", deref(recorded.LVMS)), fmt.Sprintf("%+v", deref(actual.LVMS)))
	cmp("bundle", fmt.Sprintf("%+v", recorded.Bundle), fmt.Sprintf("%+v", actual.Bundle))
	cmp("payloads", byKey(recorded.Payloads, func(p Payload) string { return p.Arch }), byKey(actual.Payloads, func(p Payload) string { return p.Arch }))
	cmp("snapshotAssets.commit", recorded.SnapshotAssets.Commit, actual.SnapshotAssets.Commit)
	cmp("snapshotAssets.sha256", recorded.SnapshotAssets.SHA256, actual.SnapshotAssets.SHA256)
	rs, as := byKey(recorded.SnapshotAssets.Files, filePath), byKey(actual.SnapshotAssets.Files, filePath)
	for _, k := range unionKeys(rs, as) {
		cmp("snapshotAssets.files["+k+"].sha256", rs[k].SHA256, as[k].SHA256)
	}
	ri, ai := byKey(recorded.Images, func(i ImageDigests) string { return i.Key }), byKey(actual.Images, func(i ImageDigests) string { return i.Key })
	for _, k := range unionKeys(ri, ai) {
		cmp("images["+k+"]", fmt.Sprintf("%+v", ri[k]), fmt.Sprintf("%+v", ai[k]))
	}
	rf, af := byKey(recorded.Files, filePath), byKey(actual.Files, filePath)
	for _, k := range unionKeys(rf, af) {
		cmp("files["+k+"].sha256", rf[k].SHA256, af[k].SHA256)
	}
	return append(out, compareProvenance(recorded.Provenance, actual.Provenance)...)
}

// compareProvenance compares what proved each digest: the policy, whether unsigned content
// was allowed, and each record. A lock written before signatures were verified records none,
// and is not drift for that (--check says so).
func compareProvenance(recorded, actual *provenance.Report) []string {
	if recorded == nil {
		return nil
	}
	if actual == nil {
		return []string{"provenance: the lock records signatures, this run verified none"}
	}
	var out []string
	if recorded.Policy != actual.Policy {
		out = append(out, fmt.Sprintf("provenance.policy: the lock records %s, this run's policy is %s", recorded.Policy, actual.Policy))
	}
	if recorded.AllowUnsigned != actual.AllowUnsigned {
		out = append(out, fmt.Sprintf("provenance.allowUnsigned: the lock records %v, this run %v", recorded.AllowUnsigned, actual.AllowUnsigned))
	}
	key := func(r provenance.Record) string { return r.Role + " " + r.Image + "@" + r.Digest }
	rr, ar := byKey(recorded.Records, key), byKey(actual.Records, key)
	for _, k := range unionKeys(rr, ar) {
		a, b := rr[k], ar[k]
		switch {
		case a.Digest == "":
			out = append(out, fmt.Sprintf("provenance[%s]: not in the lock, this run verified it %s", k, b.Status))
		case b.Digest == "":
			out = append(out, fmt.Sprintf("provenance[%s]: recorded in the lock, not verified by this run", k))
		case !reflect.DeepEqual(a, b):
			out = append(out, fmt.Sprintf("provenance[%s]: the lock records %s, this run found %s", k, describe(a), describe(b)))
		}
	}
	return out
}

// describe is a record in one line for drift messages.
func describe(r provenance.Record) string {
	if r.Status != provenance.StatusSigned {
		return fmt.Sprintf("%s (%s%s)", r.Status, r.Reason, r.CoveredBy)
	}
	var sigs []string
	for _, s := range r.Signatures {
		sigs = append(sigs, fmt.Sprintf("%s sha256 %s", s.Describe(), s.SHA256))
	}
	return "signed: " + strings.Join(sigs, "; ")
}

// CheckFiles compares each recorded file hash with the file in fsys (the checkout).
func (l *Lock) CheckFiles(fsys fs.FS) []string {
	var out []string
	for _, f := range l.Files {
		b, err := safefile.ReadFS(fsys, f.Path, 0)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = append(out, fmt.Sprintf("files[%s]: recorded in the lock, missing from the tree", f.Path))
		case err != nil:
			out = append(out, fmt.Sprintf("files[%s]: %v", f.Path, err))
		default:
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
				out = append(out, fmt.Sprintf("files[%s].sha256: the lock records %s, the file has %s", f.Path, f.SHA256, hex.EncodeToString(sum[:])))
			}
		}
	}
	return out
}

func filePath(f File) string { return f.Path }

func byKey[T any](items []T, key func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[key(it)] = it
	}
	return m
}

// unionKeys returns the keys of a and b, sorted and without repeats.
func unionKeys[T any](a, b map[string]T) []string {
	out := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(out)
	return slices.Compact(out)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
