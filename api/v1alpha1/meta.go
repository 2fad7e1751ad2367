package v1alpha1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Group is the API group of every document lvms-rebase prints (and of its lock file).
const Group = "lvms-rebase.microshift.io"

// Version is the API version of this package.
const Version = "v1alpha1"

// APIVersion is the apiVersion every document of this package carries.
const APIVersion = Group + "/" + Version

// The kinds of the documents the commands print.
const (
	// KindRebaseResult is what `lvms-rebase [--dry-run|--diff|--check]` did or would do.
	KindRebaseResult = "RebaseResult"
	// KindResolution is what `lvms-rebase resolve` picked.
	KindResolution = "Resolution"
	// KindApplyResult is what `lvms-rebase apply` did.
	KindApplyResult = "ApplyResult"
	// KindBranchStatusList is `lvms-rebase outdated`'s answer; its items are KindBranchStatus.
	KindBranchStatusList = "BranchStatusList"
	// KindBranchStatus is one branch of a KindBranchStatusList.
	KindBranchStatus = "BranchStatus"
	// KindBranchRebaseList is what `lvms-rebase --branches a,b` did per branch.
	KindBranchRebaseList = "BranchRebaseList"
	// KindLvmdCheck is `lvms-rebase lvmd check`'s answer.
	KindLvmdCheck = "LvmdCheck"
	// KindVersion is `lvms-rebase version`.
	KindVersion = "Version"
)

// Kinds lists every kind of this package, in the order docs/output.md lists them.
func Kinds() []string {
	return []string{KindRebaseResult, KindResolution, KindApplyResult, KindBranchStatusList, KindBranchStatus,
		KindBranchRebaseList, KindLvmdCheck, KindVersion}
}

// TypeMeta says what a document is: apiVersion and kind, first in every document. Empty in a
// document nested in another (a RebaseResult's resolution, a BranchRebase's result), where it
// is left out.
type TypeMeta struct {
	// APIVersion is always APIVersion.
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind is one of Kinds.
	Kind string `json:"kind,omitempty"`
}

// Meta is the TypeMeta of a document of kind.
func Meta(kind string) TypeMeta { return TypeMeta{APIVersion: APIVersion, Kind: kind} }

// Document is one of this package's kinds.
type Document interface {
	// GetTypeMeta returns the document's apiVersion and kind.
	GetTypeMeta() TypeMeta
}

// GetTypeMeta returns t: every kind embeds TypeMeta, so every kind is a Document.
func (t TypeMeta) GetTypeMeta() TypeMeta { return t }

// Duration is a time.Duration printed as a Go duration string ("1.503s", "12.4ms"), never as
// an integer of nanoseconds (that was the one unit change, made when v1alpha1 was declared).
type Duration struct {
	time.Duration
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string; null leaves d as it is (encoding/json's rule).
func (d *Duration) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("duration: expected a Go duration string (\"1.5s\"): %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	d.Duration = v
	return nil
}
