package rebase

import (
	"net/url"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
	"github.com/lvms-rebase/lvms-rebase/rebase/option"
	"github.com/lvms-rebase/lvms-rebase/rebase/provenance"
)

// ProvenanceOptions configure signature verification.
type ProvenanceOptions struct {
	// PolicyFile is a containers-policy.json(5); empty: the built-in policy
	// (provenance.Builtin), which requires Red Hat's or OpenShift CI's signature on every digest.
	PolicyFile string
	// AllowUnsigned accepts digests without a valid signature; the run records them as unsigned
	// (lock, -o json, PR body, --check).
	AllowUnsigned bool
	// Stores replace the default signature stores (provenance.DefaultStores).
	Stores []string
}

// validate loads the policy file (every problem named by file and field) and checks the store
// URLs, before anything is fetched.
func (o ProvenanceOptions) validate() error {
	if o.PolicyFile != "" {
		if _, err := provenance.LoadPolicy(o.PolicyFile); err != nil {
			return &option.PathError{Option: option.SignaturePolicy, Path: o.PolicyFile, Err: err}
		}
	}
	seen := map[string]bool{}
	for _, s := range o.Stores {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return option.Errorf(option.SignatureStore, "%q: expected an http(s) URL without query or fragment, e.g. %s", redact.URL(s), provenance.OfficialStore)
		}
		if u.User != nil {
			return option.Errorf(option.SignatureStore, "%q: credentials in a store URL are refused (they would be recorded in the lock); use %s", redact.URL(s), option.AuthFile)
		}
		// A store given twice would be searched twice: a copy-paste slip, said at once.
		key := strings.TrimRight(s, "/")
		if seen[key] {
			return option.Errorf(option.SignatureStore, "%q is given twice", redact.URL(s))
		}
		seen[key] = true
	}
	return nil
}
