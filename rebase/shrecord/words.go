package shrecord

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// literal unquotes a word made of plain text and quotes only, as bash would; ok is false for
// a word with an expansion (parameter, command, arithmetic, process, extended glob, $'…').
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, func(byte) bool { return true }))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, func(c byte) bool { return strings.IndexByte(dquoteSpecial, c) >= 0 }))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// expanded says which expansion bash applies to the unquoted text of a literal word ("" for
// none): pathname patterns (* ? [), braces ({a,b}, {1..3}) and a leading tilde. A quoted or
// backslash-escaped character is text.
func expanded(w *syntax.Word) string {
	for i, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		if i == 0 && strings.HasPrefix(l.Value, "~") {
			return "tilde expansion"
		}
		for j := 0; j < len(l.Value); j++ {
			switch c := l.Value[j]; c {
			case '\\':
				j++
			case '*', '?', '[':
				return "pathname expansion (" + string(c) + ")"
			case '{', '}':
				return "brace expansion"
			}
		}
	}
	return ""
}

// unescape removes the backslashes bash removes: before any character outside quotes, before
// $ ` " \ and newline inside double quotes (special says which); an escaped newline joins lines.
func unescape(s string, special func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && special(s[i+1]) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// literalOr is literal's value, or def for a word with an expansion.
func literalOr(w *syntax.Word, def string) string {
	if v, ok := literal(w); ok {
		return v
	}
	return def
}

// unquotedTail is the text of a command word with quote characters removed, enough to take
// its base name: `"$ROOT/scripts/auto-rebase/rebase.sh"` ends in rebase.sh.
func unquotedTail(s string) string {
	return string(bytes.Map(func(r rune) rune {
		if r == '"' || r == '\'' || r == '\\' {
			return -1
		}
		return r
	}, []byte(s)))
}

// baseName is the last path element of a command word as written, quotes removed; "" when
// that element holds an expansion ($, `), so that it cannot name a script by itself.
func baseName(src string) string {
	b := path.Base(unquotedTail(src))
	if strings.ContainsAny(b, "$`") {
		return ""
	}
	return b
}

// dquoteSpecial are the characters a backslash escapes inside double quotes.
const dquoteSpecial = "$`\"\\\n"

// safeArg are the bytes a rewritten argument may hold: what pull specs are made of, none of
// them special to bash inside double quotes.
const safeArg = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@+="

// Quote writes a pull spec as an argument the way MicroShift's scripts write it, in double
// quotes; a string with a character bash would treat specially there is an error.
func Quote(s string) (string, error) {
	if s == "" || strings.Trim(s, safeArg) != "" {
		return "", fmt.Errorf("%q: expected a pull spec (letters, digits and ._-/:@+=)", s)
	}
	return `"` + s + `"`, nil
}
