package applier

import (
	"net/url"
	"regexp"
	"strings"
)

// The applier is its own module and cannot use the rebase tool's internal/redact; this is the
// part of it the applier needs: a kubeconfig server URL's user info and query values never reach
// an error or a log line (MicroShift logs both).

const redactMask = "xxxxx"

var (
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^\s"'<>@/]*@`)
	urlQuery    = regexp.MustCompile(`([?&][A-Za-z0-9_.\-~%\[\]]+=)[^&\s"'#<>]+`)
)

// hostSecrets lists the user name, password and query values in a server URL, so they are
// scrubbed even where an error quotes them outside a URL.
func hostSecrets(host string) []string {
	u, err := url.Parse(host)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}

// redactText masks URL user info, query values and the given secrets in s.
func redactText(s string, secrets []string) string {
	s = urlUserinfo.ReplaceAllString(s, "${1}"+redactMask+"@")
	s = urlQuery.ReplaceAllString(s, "${1}"+redactMask)
	for _, sec := range secrets {
		if len(sec) >= 3 { // a one- or two-letter value would mask unrelated text
			s = strings.ReplaceAll(s, sec, redactMask)
		}
	}
	return s
}

// redactedError keeps err's chain for errors.Is/As but prints it scrubbed.
type redactedError struct {
	err     error
	secrets []string
}

func (e redactedError) Error() string { return redactText(e.err.Error(), e.secrets) }
func (e redactedError) Unwrap() error { return e.err }

// redactErr scrubs err's message of host's credentials; nil stays nil.
func redactErr(err error, host string) error {
	if err == nil {
		return nil
	}
	return redactedError{err: err, secrets: hostSecrets(host)}
}
