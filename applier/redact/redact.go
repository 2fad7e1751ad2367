// Package redact removes credentials from one URL or image reference where it is formatted
// for an error, a log line or a record. A user name, password or token may sit in the user
// info ("https://user:pw@host/…", "user:pw@host/repo:tag"), a query value, the fragment or
// a path parameter (";token=…"); each is masked (URL, for messages) or removed (Strip, for
// values that are recorded). It is the one home of this rule for both modules: the applier
// formats kubeconfig server URLs with it, the rebase tool the URLs and references users
// give (--snapshot-assets, --mirror, IDMS mirrors, --ocp-release*, --lvms-bundle*). Nothing
// scrubs output streams: a value is safe because it was formatted through here.
//
// The value is split by hand rather than by net/url, because what a user pastes is often
// not a valid URL — a password with "/", "#", "?", a space or a quote in it — and net/url
// would then either fail (and quote the input in its error) or take part of the password
// for the host or the fragment.
package redact

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Mask replaces a secret in URL's output.
const Mask = "xxxxx"

// parts is a URL or reference split around the places credentials live.
type parts struct {
	scheme    string // "https://", or "" for a reference without one
	user      string // user info (before the last "@" that does not start a digest)
	hasUser   bool
	rest      string // host, port and path, path parameters included
	query     string
	hasQuery  bool
	fragment  string
	hasFrag   bool
	ambiguous bool // the user info holds "#" or "?": the "@" may be in a query or fragment
}

var (
	schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*://`)
	// digestRE is what follows the "@" of a digest reference (repo@sha256:…), which is not
	// user info.
	digestRE = regexp.MustCompile(`^(sha256|sha384|sha512):[0-9a-fA-F]`)
)

func split(raw string) parts {
	var p parts
	s := raw
	if m := schemeRE.FindString(s); m != "" {
		p.scheme, s = m, s[len(m):]
	}
	// User info ends at the last "@" that does not start a digest: a password may hold "@",
	// "/" or ":", a reference holds no "@" but its digest's.
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '@' && !digestRE.MatchString(s[i+1:]) {
			p.user, p.hasUser, s = s[:i], true, s[i+1:]
			p.ambiguous = strings.ContainsAny(p.user, "#?")
			break
		}
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		p.fragment, p.hasFrag, s = s[i+1:], true, s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		p.query, p.hasQuery, s = s[i+1:], true, s[:i]
	}
	p.rest = s
	return p
}

// URL masks the user info, every query value, the fragment and every path parameter of
// one URL or image reference, keeping the rest byte for byte ("https://xxxxx@host/a;xxxxx/b
// ?token=xxxxx#xxxxx"). A value whose user info holds "#" or "?" cannot be split safely and
// is masked whole after its scheme. Values without credentials come back unchanged.
func URL(raw string) string {
	p := split(raw)
	if p.ambiguous {
		return p.scheme + Mask
	}
	var b strings.Builder
	b.WriteString(p.scheme)
	if p.hasUser {
		b.WriteString(Mask + "@")
	}
	b.WriteString(params(p.rest, ";"+Mask))
	if p.hasQuery {
		b.WriteByte('?')
		for i, kv := range strings.Split(p.query, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			if k, _, ok := strings.Cut(kv, "="); ok {
				b.WriteString(k + "=" + Mask)
			} else if kv != "" {
				b.WriteString(Mask)
			}
		}
	}
	if p.hasFrag {
		b.WriteString("#" + Mask)
	}
	return b.String()
}

// Strip removes the user info, query, fragment and path parameters, for values that are
// recorded and reused (the lock's snapshot-assets source): a masked token would only fail
// later, a missing one asks the user to give it again. A value URL would mask whole
// becomes its scheme and the mask.
func Strip(raw string) string {
	p := split(raw)
	if p.ambiguous {
		return p.scheme + Mask
	}
	return p.scheme + params(p.rest, "")
}

// params replaces each path parameter (";…" up to the next "/") of path with repl.
func params(path, repl string) string {
	if !strings.Contains(path, ";") {
		return path
	}
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if j := strings.IndexByte(seg, ';'); j >= 0 {
			segs[i] = seg[:j] + repl
		}
	}
	return strings.Join(segs, "/")
}

// Secrets lists the credential-bearing pieces of raw as they appear in it — user info
// (whole, and user and password apart), query values, fragment, path parameters — for
// errors from libraries that quote them outside the URL. Pieces shorter than three bytes
// are left out: masking them would mangle unrelated text.
func Secrets(raw string) []string {
	p := split(raw)
	var out []string
	add := func(s string) {
		if len(s) >= 3 {
			out = append(out, s)
			if u, err := url.PathUnescape(s); err == nil && u != s && len(u) >= 3 {
				out = append(out, u)
			}
		}
	}
	if p.ambiguous {
		add(strings.TrimPrefix(raw, p.scheme))
		return out
	}
	if p.hasUser {
		add(p.user)
		u, pw, _ := strings.Cut(p.user, ":")
		add(u)
		add(pw)
	}
	for _, kv := range strings.Split(p.query, "&") {
		_, v, ok := strings.Cut(kv, "=")
		if !ok {
			v = kv
		}
		add(v)
	}
	add(p.fragment)
	for _, seg := range strings.Split(p.rest, "/") {
		if _, prm, ok := strings.Cut(seg, ";"); ok {
			add(prm)
		}
	}
	return out
}

// Err returns err printing every URL that a *url.Error in its chain carries through URL:
// net/http and url.Parse quote the whole URL in their errors, and wrappers above them have
// already copied that text. The cause of a parse error may quote a piece of the URL too
// ("invalid port \":pw\" after host"); when the URL carries credentials it reads as a plain
// statement instead. errors.Is and errors.As still see err's chain.
func Err(err error) error {
	var pairs []string
	walk(err, func(e error) {
		ue, ok := e.(*url.Error)
		if !ok {
			return
		}
		red := URL(ue.URL)
		if red == ue.URL {
			return
		}
		if ue.Op == "parse" && ue.Err != nil {
			pairs = append(pairs, ue.Err.Error(), "malformed URL (details withheld: it carries credentials)")
		}
		// url.Error prints the URL with %q; the quoted form goes first, being the longer.
		pairs = append(pairs, strconv.Quote(ue.URL), strconv.Quote(red), ue.URL, red)
	})
	if len(pairs) == 0 {
		return err
	}
	return &rewritten{err: err, r: strings.NewReplacer(pairs...)}
}

// rewritten is an error whose message has its URLs redacted.
type rewritten struct {
	err error
	r   *strings.Replacer
}

func (e *rewritten) Error() string { return e.r.Replace(e.err.Error()) }
func (e *rewritten) Unwrap() error { return e.err }

// walk calls f on err and every error it wraps, through errors.Join and multi-%w too.
func walk(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, f)
		}
	}
}

// Header masks the secrets of one HTTP header for a log of requests and responses (the
// rebase's -v 7): the credentials of Authorization and Proxy-Authorization (their scheme
// stays: "Bearer xxxxx"), every cookie, any header whose name says it carries a token, a
// secret, a password, a key, a signature, a session or credentials, and the query values of
// URLs in Location, Content-Location, Link and Referer (a redirect to a signed blob URL).
// Challenges (WWW-Authenticate, Proxy-Authenticate) name the server's realm and scope, not
// the client's secret, and stay as they are, as does any other header.
func Header(name, value string) string {
	switch n := strings.ToLower(name); {
	case n == "www-authenticate" || n == "proxy-authenticate":
		return value
	case n == "authorization" || n == "proxy-authorization":
		if scheme, _, ok := strings.Cut(strings.TrimSpace(value), " "); ok && scheme != "" {
			return scheme + " " + Mask
		}
		return Mask
	case n == "location" || n == "content-location" || n == "link" || n == "referer":
		return URL(value)
	case secretHeader(n):
		return Mask
	}
	return value
}

// secretHeader reports whether a lower-case header name says it carries a secret.
func secretHeader(name string) bool {
	for _, w := range []string{"auth", "cookie", "token", "secret", "passw", "key", "signature", "session", "credential"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
