// Package shrecord reads MicroShift's rebase records — scripts/auto-rebase/last_rebase.sh (the
// OCP payloads of its own rebase.sh) and the LVMS bundle record (last_rebase_lvms.sh, or
// last_lvms_rebase.sh up to 4.17) — as the bash scripts they are, with mvdan.cc/sh's parser.
//
// A record is a script a maintainer runs to repeat a rebase, so what counts is the invocation
// bash would leave the tree on: `<dir>/rebase.sh to X Y` as a plain top-level command, run
// directly or through the few wrappers whose effect is certain (bash or sh with options that
// do not change what runs, command, exec). Comments, strings, echo/printf arguments and
// here-document bodies are text; quoting and continuations mean what they mean to bash.
//
// The rest of the script is evaluated only as far as that is exact, and refused otherwise,
// with an error naming the line: a record is read by what bash does, never by a guess that
// could pick a pull spec the tree is not on. So an invocation bash may or may not run (inside
// a function, condition, loop, pipeline, subshell, substitution, in the background), one
// another command runs (env, nohup, timeout, xargs, sudo, eval, bash -c, a pipe or here-document
// into a shell, a trap), a second one, one after a statement that may end the script (exit,
// exec, a failing command under set -e, an unset variable under set -u), and every command this
// reader does not know to leave rebase.sh alone (functions, aliases, source, other programs)
// are errors. Only literal arguments are read: a variable, a substitution or a word bash would
// expand (globs, braces, ~) is refused.
//
// Reading is bounded: a record is at most MaxSize bytes (which bounds the parser's recursion)
// and nested at most maxNesting deep; code strings (eval, bash -c, trap) are read to
// maxCodeDepth. Bytes bash reads differently from the parser are refused (CR, NUL) or kept as
// text (non-UTF-8 bytes in comments and strings, refused inside the invocation).
package shrecord

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"unicode/utf8"

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

	// subEnd and argsEnd are the byte offsets where the sub-command and the last argument end.
	subEnd, argsEnd int
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

// MaxSize is the largest record read, in bytes. MicroShift's records are one command (about
// 200 bytes); the cap bounds the parser's work and its recursion, which a deeply nested file
// would otherwise drive to a fatal stack overflow.
const MaxSize = 16 << 10

// maxNesting is how deeply a record's syntax may nest (MicroShift's records: 6 levels).
const maxNesting = 100

// maxCodeDepth is how deeply code strings (eval, bash -c, trap) are read inside each other.
const maxCodeDepth = 3

// Find returns the one invocation matching a spec that bash runs when it runs data, the
// content of file (a path used in errors); nil when it runs none. Everything that makes the
// answer uncertain is an *Error naming the line (see the package documentation).
func Find(file string, data []byte, specs ...Spec) (*Call, error) {
	if len(data) > MaxSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("%d bytes: a record is at most %d bytes (it holds one command); not read", len(data), MaxSize)}
	}
	if err := checkBytes(file, data); err != nil {
		return nil, err
	}
	r := &reader{file: file, data: data, specs: specs}
	r.shebang()
	f, err := r.parse(data, 0)
	if err != nil {
		return nil, err
	}
	return r.script(f.Stmts)
}

// checkBytes refuses the bytes bash reads otherwise than the parser: a carriage return (CRLF
// line ends) is part of a word to bash, so `to "x"\r` passes "x\r"; a NUL is not text.
func checkBytes(file string, data []byte) error {
	if bytes.HasPrefix(data, []byte("\uFEFF")) {
		return &Error{File: file, Line: 1, Msg: "UTF-8 byte-order mark: bash reads it as part of the first word, so the record does not run as it reads; save the file without it"}
	}
	for _, c := range []struct {
		b   byte
		msg string
	}{
		{'\r', "carriage return (CRLF line ends?): bash reads it as part of a word, so the record does not run as it reads; save the file with LF line ends"},
		{0, "NUL byte: not a text file"},
	} {
		if i := bytes.IndexByte(data, c.b); i >= 0 {
			return &Error{File: file, Line: bytes.Count(data[:i], []byte("\n")) + 1, Msg: c.msg}
		}
	}
	return nil
}

// substitute stands in for each byte that is not UTF-8 while parsing: bash takes any byte
// as text, the parser only UTF-8. It is one byte, so offsets stay those of the file.
const substitute = 0x1a

// parse parses code (the file, or a code string at depth > 0) as bash, with non-UTF-8 bytes
// substituted, and refuses syntax nested deeper than maxNesting.
func (r *reader) parse(code []byte, depth int) (*syntax.File, error) {
	src := code
	if !utf8.Valid(code) {
		src = bytes.Clone(code)
		for i := 0; i < len(src); {
			c, n := utf8.DecodeRune(src[i:])
			if c == utf8.RuneError && n == 1 {
				src[i] = substitute
			}
			i += n
		}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(src), r.file)
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, r.errAt(int(pe.Pos.Line()), "column %d: not a bash script: %s", pe.Pos.Col(), pe.Text)
		}
		return nil, r.errAt(0, "not a bash script: %v", err)
	}
	if line := deepest(f); line > 0 {
		return nil, r.errAt(line, "syntax nested more than %d deep: a record holds one command; not read", maxNesting)
	}
	return f, nil
}

// deepest returns the line of the first node nested deeper than maxNesting (0: none); Walk
// calls f(nil) as it leaves a node whose children it walked.
func deepest(f *syntax.File) int {
	depth, line := 0, 0
	syntax.Walk(f, func(n syntax.Node) bool {
		switch {
		case n == nil:
			depth--
		case line > 0:
			return false
		case depth >= maxNesting:
			line = int(n.Pos().Line())
			return false
		default:
			depth++
		}
		return true
	})
	return line
}

// Rewrite returns data, the record c was found in, with c's arguments replaced by args,
// written as MicroShift's scripts write them (double-quoted). Every other byte stays: the
// shebang, comments (whatever their encoding), the script path and anything after the
// arguments. The result is read back and must run exactly args.
func (c *Call) Rewrite(file string, data []byte, spec Spec, args ...string) ([]byte, error) {
	var b bytes.Buffer
	b.Write(data[:c.subEnd])
	for _, a := range args {
		q, err := Quote(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		b.WriteString(" " + q)
	}
	b.Write(data[c.argsEnd:])
	out := b.Bytes()
	got, err := Find(file, out, spec)
	if err != nil {
		return nil, fmt.Errorf("%s rewritten: %w", file, err)
	}
	if got == nil || fmt.Sprint(got.Args) != fmt.Sprint(args) {
		return nil, fmt.Errorf("%s rewritten does not run %s %s with %q", file, path.Base(unquotedTail(c.Script)), c.Sub, args)
	}
	return out, nil
}
