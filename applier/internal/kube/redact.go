package kube

import (
	"strconv"
	"strings"

	"github.com/lvms-rebase/lvms-rebase/applier/redact"
)

// A kubeconfig server URL's user info, query values, fragment and path parameters never
// reach an error or a log line (MicroShift logs both); applier/redact splits the URL.

// hostSecrets lists the credential-bearing pieces of a server URL, so they are masked even
// where client-go quotes them outside the URL.
func hostSecrets(host string) []string { return redact.Secrets(host) }

// redactText masks the given secrets in s, as they are and as %q prints them (client-go
// quotes a server URL it rejects).
func redactText(s string, secrets []string) string {
	for _, sec := range secrets {
		q := strconv.Quote(sec)
		s = strings.ReplaceAll(s, q[1:len(q)-1], redact.Mask)
		s = strings.ReplaceAll(s, sec, redact.Mask)
	}
	return s
}

// redactedError keeps err's chain for errors.Is/As but prints it without the server URL's
// credentials.
type redactedError struct {
	err     error
	secrets []string
}

func (e redactedError) Error() string { return redactText(redact.Err(e.err).Error(), e.secrets) }
func (e redactedError) Unwrap() error { return e.err }

// redactErr scrubs err's message of host's credentials; nil stays nil.
func redactErr(err error, host string) error {
	if err == nil {
		return nil
	}
	return redactedError{err: err, secrets: hostSecrets(host)}
}
