// Package shrecord reads MicroShift's rebase records — scripts/auto-rebase/last_rebase.sh (the
// OCP payloads of its own rebase.sh) and the LVMS bundle record (last_rebase_lvms.sh, or
// last_lvms_rebase.sh up to 4.17) — as the bash scripts they are, with mvdan.cc/sh's parser.
//
// A record is a script a maintainer runs to repeat a rebase, so what counts is what bash would
// execute: only a top-level simple command `<dir>/rebase.sh to X Y` is the invocation. Comments,
// strings, echo/printf arguments and here-document bodies are text, not commands; quoting and
// backslash continuations mean what they mean to bash. An invocation bash may or may not run
// (inside a function, condition, loop, pipeline, subshell or command substitution) and a second
// executed invocation are errors naming their lines: reading a record by guess could silently
// pick a pull spec the tree is not based on.
package shrecord

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Spec names the invocation a record holds: the script's base names and its sub-command.
type Spec struct {
	// Scripts are the accepted base names of the command ("rebase.sh").
	Scripts []string
	// Sub is the sub-command, the first argument ("to").
	Sub string
}

// Call is the one executed invocation of a record.
type Call struct {
	// Script is the command word as written in the file, quotes included
	// ("./scripts/auto-rebase/rebase.sh"), so a rewrite of the record can keep it.
	Script string
	// Sub is the sub-command ("to").
	Sub string
	// Args are the words after the sub-command, unquoted as bash would pass them.
	Args []string
	// Line is the 1-based line the command starts on.
	Line int
}

// Error is a record that cannot be read unambiguously; it names the file and the line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: line %d: %s", e.File, e.Line, e.Msg)
}

// Find returns the one executed invocation matching a spec in data, the content of file (a
// path used in errors); nil when there is none. A script that does not parse as bash, an
// invocation whose execution depends on control flow, one with an argument that is not a
// literal word (a variable, a command substitution) and two executed invocations are errors.
func Find(file string, data []byte, specs ...Spec) (*Call, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), file)
	if err != nil {
		return nil, parseError(file, err)
	}
	r := &reader{file: file, data: data, specs: specs}
	var found *Call
	for _, st := range f.Stmts {
		call, stop, err := r.topLevel(st)
		if err != nil {
			return nil, err
		}
		if call != nil && found != nil {
			return nil, &Error{File: file, Line: call.Line, Msg: fmt.Sprintf(
				"a second %s %s command (the first is on line %d): a record runs one; remove one of them",
				path.Base(unquotedTail(call.Script)), call.Sub, found.Line)}
		}
		if call != nil {
			found = call
		}
		if stop {
			break // bash never reaches what follows an unconditional exit or exec
		}
	}
	return found, nil
}

// parseError names the line (and column) where bash would stop reading the file.
func parseError(file string, err error) *Error {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: int(pe.Pos.Line()), Msg: fmt.Sprintf("column %d: not a bash script: %s", pe.Pos.Col(), pe.Text)}
	}
	return &Error{File: file, Msg: fmt.Sprintf("not a bash script: %v", err)}
}

type reader struct {
	file  string
	data  []byte
	specs []Spec
}

// topLevel reads one top-level statement: the invocation when it is one, whether bash stops
// after it, and an error when an invocation hides anywhere else in it.
func (r *reader) topLevel(st *syntax.Stmt) (call *Call, stop bool, err error) {
	ce, _ := st.Cmd.(*syntax.CallExpr)
	if ce != nil {
		if call, err = r.match(ce); err != nil {
			return nil, false, err
		}
		stop = !st.Background && len(ce.Args) > 0 && slices.Contains([]string{"exit", "exec"}, literalOr(ce.Args[0], ""))
	}
	var nested error
	syntax.Walk(st, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if nested != nil || !ok || c == ce {
			return nested == nil
		}
		m, err := r.match(c)
		switch {
		case err != nil:
			nested = err
		case m != nil:
			nested = &Error{File: r.file, Line: m.Line, Msg: fmt.Sprintf(
				"%s %s is not a plain top-level command (it is inside a function, condition, loop, pipeline, subshell or substitution), so whether bash runs it cannot be read from the file; write it as one command on its own",
				m.Script, m.Sub)}
		}
		return nested == nil
	})
	if nested != nil {
		return nil, false, nested
	}
	return call, stop, nil
}

// wrappers are commands that run their arguments as the command (bash and sh with their
// options, exec, command).
var wrappers = []string{"bash", "sh", "exec", "command"}

// unwrap drops leading wrapper words: `bash -x ./rebase.sh to …` runs rebase.sh.
func unwrap(args []*syntax.Word) []*syntax.Word {
	for len(args) > 1 && slices.Contains(wrappers, literalOr(args[0], "")) {
		args = args[1:]
		for len(args) > 1 {
			opt := literalOr(args[0], "")
			if len(opt) < 2 || opt[0] != '-' || opt == "-c" || opt == "--" {
				break
			}
			args = args[1:]
		}
	}
	return args
}

// match returns the invocation c is, or nil when c runs something else.
func (r *reader) match(c *syntax.CallExpr) (*Call, error) {
	words := unwrap(c.Args)
	if len(words) < 2 {
		return nil, nil
	}
	base := path.Base(unquotedTail(r.source(words[0])))
	sub := literalOr(words[1], "")
	var spec *Spec
	for i := range r.specs {
		if slices.Contains(r.specs[i].Scripts, base) && r.specs[i].Sub == sub {
			spec = &r.specs[i]
		}
	}
	if spec == nil {
		return nil, nil
	}
	call := &Call{Script: r.source(words[0]), Sub: sub, Line: int(c.Pos().Line())}
	for i, w := range words[2:] {
		v, ok := literal(w)
		if !ok {
			return nil, &Error{File: r.file, Line: int(w.Pos().Line()), Msg: fmt.Sprintf(
				"%s %s: argument %d (%s) is not a literal word: expected a quoted or plain pull spec, not a variable or substitution", base, sub, i+1, r.source(w))}
		}
		call.Args = append(call.Args, v)
	}
	return call, nil
}

// source is the text of a node as written in the file.
func (r *reader) source(n syntax.Node) string {
	return string(r.data[n.Pos().Offset():n.End().Offset()])
}

// literal unquotes a word made of plain text and quotes only, as bash would; ok is false for
// a word with an expansion (parameter, command, arithmetic, process, brace, extended glob).
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

// dquoteSpecial are the characters a backslash escapes inside double quotes.
const dquoteSpecial = "$`\"\\\n"
