// Package redact is the one place that keeps credentials out of outputs. A user name,
// password or query token inside a URL or image reference the user gives (--snapshot-assets,
// --mirror, IDMS mirrors, --ocp-release*, --lvms-bundle*, a kubeconfig server URL) must
// never reach the lock file, the PR body, git commits, -o json, logs or error messages.
//
// URL masks one value, Strip removes credentials for recording (the lock), and Text scrubs
// free text (errors, logs, printed results) where values are embedded in prose.
package redact

import (
	"io"
	"regexp"
	"strings"
)

// Mask replaces a secret.
const Mask = "xxxxx"

// URL masks the userinfo and every query value of one URL or reference, keeping the rest
// byte for byte. It works on values url.Parse rejects too, since a malformed URL may hold a
// password with "/" or ":" in it.
func URL(raw string) string { return Text(raw) }

// Strip removes the userinfo and the query of a URL or reference, for values that are
// recorded and reused (the lock's snapshot-assets source): a masked token would only fail
// later, a missing one asks the user to give it again.
func Strip(raw string) string {
	if i := strings.Index(raw, "?"); i >= 0 {
		raw = raw[:i]
	}
	raw = replaceUnlessDigest(raw, schemeUserinfo, func(m []string) string { return m[1] })
	return replaceUnlessDigest(raw, bareUserinfo, func(m []string) string { return m[1] })
}

var (
	// schemeUserinfo is "scheme://…@": everything up to the last "@" before a blank or quote
	// may be userinfo (a malformed one may contain "/" or ":").
	schemeUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^\s"'<>@]*)@`)
	// bareUserinfo is "user:password@host…" at the start of a token (a reference given without
	// a scheme); "name:tag@sha256:…" is a digest reference, not userinfo, and is kept.
	bareUserinfo = regexp.MustCompile(`(^|[\s"'=(\[<,])([^\s"'=/@:<>(\[,]+(:[^\s"'/@<>]+)?)@`)
	// hostPath is what follows a bare "token@" that is user info: a host and a path, so an
	// e-mail address ("demo@localhost") is kept.
	hostPath = regexp.MustCompile(`^[A-Za-z0-9.\-\[\]:]+/`)
	// queryValue is one key=value of a URL query.
	queryValue  = regexp.MustCompile(`((?:[?&]|\\u0026)[A-Za-z0-9_.\-~%\[\]]+=)([^&\s"'#<>\\]+)`)
	digestAfter = regexp.MustCompile(`^(sha256|sha384|sha512):[0-9a-f]`)
)

// Text scrubs every URL userinfo, "user:password@" reference prefix and query value in s.
func Text(s string) string {
	s = replaceUnlessDigest(s, schemeUserinfo, func(m []string) string { return m[1] + Mask + "@" })
	s = replaceUnlessDigest(s, bareUserinfo, func(m []string) string { return m[1] + Mask + "@" })
	return queryValue.ReplaceAllString(s, "${1}"+Mask)
}

// replaceUnlessDigest rewrites each match of re whose "@" does not start a digest.
func replaceUnlessDigest(s string, re *regexp.Regexp, repl func([]string) string) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		rest := s[m[1]:]
		switch {
		case digestAfter.MatchString(rest), re == schemeUserinfo && m[5] == m[4]:
			continue
		case re == bareUserinfo && m[6] < 0 && !hostPath.MatchString(rest):
			continue // "name@host" without a password or a path: an e-mail address
		}
		groups := make([]string, len(m)/2)
		for i := range groups {
			if m[2*i] >= 0 {
				groups[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(repl(groups))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// Writer scrubs everything written through it with Text. Commands wrap their stdout and
// stderr in one, so no output path (results, logs, progress, errors) can print a credential.
// Each Write is scrubbed on its own: writers above it emit whole lines or documents.
type Writer struct{ W io.Writer }

func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Error wraps err so that its message is scrubbed with Text; errors.Is/As still see err.
// Libraries that embed user-given URLs in errors (a kubeconfig server) return it.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return scrubbed{err}
}

type scrubbed struct{ err error }

func (s scrubbed) Error() string { return Text(s.err.Error()) }
func (s scrubbed) Unwrap() error { return s.err }
