package shrecord

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// reader evaluates one record's top-level statements in order, as bash runs them.
type reader struct {
	file  string
	data  []byte
	specs []Spec

	// errexit and nounset are bash's -e and -u as the statements read so far leave them;
	// setBy names where they were turned on, for messages.
	errexit, nounset bool
	setBy            map[byte]string

	found *Call
	// hazard is the first statement read before the invocation after which bash may end the
	// script; stop is the line (and what) bash certainly leaves the script at.
	hazard   *hazard
	stopLine int
	stopWhat string

	// site is set in a reader of a code string (eval, bash -c, trap): every error names the
	// line of the command in the file that holds the string, and the command.
	site *codeSite
}

type hazard struct {
	line int
	why  string
}

// codeSite is where a code string sits in the record: its line, the command running it, and
// how deeply code strings nest there.
type codeSite struct {
	line  int
	what  string
	depth int
}

// errAt is an *Error at a 1-based line of the code being read.
func (r *reader) errAt(line int, format string, a ...any) *Error {
	msg := fmt.Sprintf(format, a...)
	if r.site != nil {
		return &Error{File: r.file, Line: r.site.line, Msg: fmt.Sprintf("inside `%s`: %s", r.site.what, msg)}
	}
	return &Error{File: r.file, Line: line, Msg: msg}
}

// errorf is an *Error at the line node n starts on.
func (r *reader) errorf(n syntax.Node, format string, a ...any) *Error {
	return r.errAt(int(n.Pos().Line()), format, a...)
}

// shebang reads bash options from the '#!' line: `#!/bin/bash -xe` runs with errexit.
func (r *reader) shebang() {
	r.setBy = map[byte]string{}
	first, _, _ := bytes.Cut(r.data, []byte("\n"))
	if !bytes.HasPrefix(first, []byte("#!")) {
		return
	}
	words := strings.Fields(string(first[2:]))
	for i, w := range words {
		if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") {
			r.setFlags(words[i:], "the '#!' line", true)
			return
		}
	}
}

// script reads the top-level statements in order.
func (r *reader) script(stmts []*syntax.Stmt) (*Call, error) {
	for _, st := range stmts {
		var err error
		if r.stopLine != 0 {
			err = r.dead(st)
		} else {
			err = r.statement(st)
		}
		if err != nil {
			return nil, err
		}
	}
	return r.found, nil
}

// statement reads one top-level statement bash reaches.
func (r *reader) statement(st *syntax.Stmt) error {
	res, err := r.check(st)
	if err != nil {
		return err
	}
	if res.call != nil {
		if err := r.take(res.call); err != nil {
			return err
		}
	}
	if res.stop != "" {
		r.stopLine, r.stopWhat = int(st.Pos().Line()), res.stop
		return nil
	}
	if r.found == nil && r.hazard == nil {
		r.hazard = r.risk(st, res)
	}
	return nil
}

// take records the invocation of a plain top-level command.
func (r *reader) take(call *Call) error {
	name := path.Base(unquotedTail(call.Script))
	if r.found != nil {
		return r.errAt(call.Line, "a second %s %s command (the first is on line %d): a record runs one; remove one of them", name, call.Sub, r.found.Line)
	}
	if h := r.hazard; h != nil {
		return r.errAt(call.Line, "%s %s may never run: bash may end the script on line %d first (%s); remove that line or make it certain",
			name, call.Sub, h.line, h.why)
	}
	r.found = call
	return nil
}

// dead reads a statement after the script has certainly ended: bash never runs it, and an
// invocation there is an error (what the record says and what bash does part ways).
func (r *reader) dead(st *syntax.Stmt) error {
	var err error
	syntax.Walk(st, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || err != nil {
			return err == nil
		}
		for i := 0; i+1 < len(c.Args) && err == nil; i++ {
			base, sub := baseName(r.source(c.Args[i])), literalOr(c.Args[i+1], "")
			if r.specFor(base, sub) != nil {
				err = r.errorf(c.Args[i], "%s %s never runs: bash leaves the script at the %s on line %d; remove one of them",
					base, sub, r.stopWhat, r.stopLine)
			}
		}
		return err == nil
	})
	return err
}

// source is the text of a node as written in the file.
func (r *reader) source(n syntax.Node) string {
	return string(r.data[n.Pos().Offset():n.End().Offset()])
}
