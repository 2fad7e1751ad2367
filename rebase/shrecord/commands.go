package shrecord

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// result is what a statement does that the reader acts on.
type result struct {
	// call is the invocation, when the statement is it as a plain top-level command.
	call *Call
	// stop is "exit" or "exec" when bash certainly leaves the script after the statement.
	stop string
	// ends is the first thing in it that may end the script (an exit inside a condition, an
	// error-if-unset expansion, an ERR trap that exits).
	ends *hazard
}

// inert are the commands a record may run that run no other command and change nothing
// bash reads later: builtins and a few programs a hand-edited record plausibly holds.
var inert = []string{
	":", "true", "false", "echo", "printf", "cat", "test", "[", "pwd", "cd", "pushd", "popd",
	"dirs", "umask", "unset", "shift", "read", "wait", "dirname", "basename", "realpath",
	"readlink", "date", "uname", "type", "getopts", "times",
}

// startup are the variables that make bash run or change code before or around a script's
// own commands (a file it sources, options, a prompt expanded under -x).
var startup = []string{"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND"}

// shells run a script file, a -c string or their standard input.
var shells = []string{"bash", "sh"}

// check reads every command of a top-level statement. A plain command (not negated, not in
// the background) may be the invocation; an invocation anywhere else is an error, as is a
// command this reader does not know, a function and a redirection onto the script.
func (r *reader) check(st *syntax.Stmt) (result, error) {
	var res result
	top, _ := st.Cmd.(*syntax.CallExpr)
	if top != nil && (st.Negated || st.Background || st.Coprocess) {
		top = nil
	}
	if top != nil {
		var err error
		if res, err = r.command(top, true); err != nil {
			return res, err
		}
	}
	where := construct(st)
	var err error
	syntax.Walk(st, func(n syntax.Node) bool {
		if err == nil && n != top {
			err = r.node(n, where, &res)
		}
		return err == nil
	})
	return res, err
}

// node checks one node of a statement below its plain command, if any.
func (r *reader) node(n syntax.Node, where string, res *result) error {
	switch n := n.(type) {
	case *syntax.CallExpr:
		c, err := r.command(n, false)
		if err != nil {
			return err
		}
		if c.call != nil {
			return r.errAt(c.call.Line, "%s %s is not a plain top-level command (it is inside %s), so whether bash runs it cannot be read from the file; write it as one command on its own line",
				baseName(c.call.Script), c.call.Sub, where)
		}
		if c.stop != "" {
			c.ends = &hazard{line: int(n.Pos().Line()), why: c.stop + " inside " + where}
		}
		res.ends = cmp(res.ends, c.ends)
	case *syntax.FuncDecl:
		return r.errorf(n, "function %s: a record defines no functions (one can stand in for any command that follows, so what bash runs could not be read from the file); remove it", n.Name.Value)
	case *syntax.CoprocClause:
		return r.errorf(n, "coproc: a record runs no coprocesses; remove it")
	case *syntax.Redirect:
		return r.redirect(n)
	case *syntax.Assign:
		if n.Name != nil && (slices.Contains(startup, n.Name.Value) || strings.HasPrefix(n.Name.Value, "BASH_FUNC_")) {
			return r.errorf(n, "sets %s, which makes bash run or change code around the script's own commands; remove it", n.Name.Value)
		}
	case *syntax.ParamExp:
		res.ends = cmp(res.ends, r.param(n))
	}
	return nil
}

// cmp is the first hazard of two.
func cmp(a, b *hazard) *hazard {
	if a != nil {
		return a
	}
	return b
}

// command reads one simple command: the invocation (through certain wrappers), a known
// command, or an error. top says it is a plain top-level command, whose option changes
// (set) bash certainly makes.
func (r *reader) command(c *syntax.CallExpr, top bool) (result, error) {
	var res result
	words := c.Args
	for len(words) > 0 {
		w := words[0]
		if base := baseName(r.source(w)); r.specFor(base, "") != nil {
			call, err := r.call(base, words)
			if call != nil {
				res.call = call
			}
			return res, err
		}
		name, ok := literal(w)
		if !ok {
			return res, r.errorf(w, "the command name %s is an expansion: what it runs cannot be read from the file", r.source(w))
		}
		next, err := r.builtin(name, words, top, &res)
		if err != nil || len(next) == 0 {
			return res, err
		}
		words = next
	}
	return res, nil
}

// builtin reads a command by its name; it returns the words of the command it runs in turn
// (exec, command, a shell running a script), none when it runs no other.
func (r *reader) builtin(name string, words []*syntax.Word, top bool, res *result) ([]*syntax.Word, error) {
	line := int(words[0].Pos().Line())
	switch {
	case name == "exec":
		return r.exec(words, res)
	case name == "command":
		return commandArgs(words), nil
	case slices.Contains(shells, name):
		return r.shell(name, words)
	case name == "exit":
		res.stop = "exit"
	case name == "return":
		res.ends = &hazard{line: line, why: "return outside a function fails (and ends a sourced record)"}
	case name == "set":
		if why := r.setFlags(literals(words[1:]), fmt.Sprintf("line %d", line), top); why != "" {
			res.ends = &hazard{line: line, why: why}
		}
	case name == "eval":
		return nil, r.eval(words, res)
	case name == "trap":
		return nil, r.trap(words, res)
	case name == "shopt":
		return nil, r.shopt(words, top)
	case name == "source" || name == ".":
		return nil, r.errorf(words[0], "`%s` runs another file, which this reader does not read: a record holds its command itself", name)
	case name == "alias":
		return nil, r.errorf(words[0], "`alias`: a record defines no aliases (one can stand in for any command that follows); remove it")
	case !slices.Contains(inert, name):
		return nil, r.unknown(name, words)
	}
	return nil, nil
}

// exec runs its command in place of bash: nothing after it runs. Without a command it only
// sets redirections.
func (r *reader) exec(words []*syntax.Word, res *result) ([]*syntax.Word, error) {
	rest := words[1:]
	if len(rest) > 0 && literalOr(rest[0], "") == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return nil, nil
	}
	if opt := literalOr(rest[0], ""); strings.HasPrefix(opt, "-") {
		return nil, r.errorf(rest[0], "`exec %s`: exec with options is not read; write the command on its own", opt)
	}
	res.stop = "exec"
	return rest, nil
}

// commandArgs are the words `command` runs: none with -v or -V, which only print.
func commandArgs(words []*syntax.Word) []*syntax.Word {
	rest := words[1:]
	for len(rest) > 0 {
		switch literalOr(rest[0], "") {
		case "-p":
			rest = rest[1:]
		case "--":
			return rest[1:]
		case "-v", "-V", "-pv", "-pV":
			return nil
		default:
			return rest
		}
	}
	return nil
}

// call reads the words of a command running a spec's script: the invocation when its
// sub-command is the spec's, nil for another sub-command.
func (r *reader) call(base string, words []*syntax.Word) (*Call, error) {
	if len(words) < 2 {
		return nil, nil
	}
	sub, ok := literal(words[1])
	if !ok {
		return nil, r.errorf(words[1], "%s: the sub-command %s is not a literal word, so whether it is %q cannot be read", base, r.source(words[1]), r.specFor(base, "").Sub)
	}
	if r.specFor(base, sub) == nil {
		return nil, nil
	}
	call := &Call{Script: r.source(words[0]), Sub: sub, Line: int(words[0].Pos().Line())}
	call.subEnd = int(words[1].End().Offset())
	call.argsEnd = call.subEnd
	for i, w := range words[2:] {
		v, err := r.arg(w)
		if err != nil {
			return nil, r.errorf(w, "%s %s: argument %d (%s) %s", base, sub, i+1, r.source(w), err)
		}
		call.Args = append(call.Args, v)
		call.argsEnd = int(w.End().Offset())
	}
	return call, nil
}

// arg is the value bash passes for an argument word of the invocation, or why it cannot be
// read exactly.
func (r *reader) arg(w *syntax.Word) (string, error) {
	raw := r.data[w.Pos().Offset():w.End().Offset()]
	if !utf8.Valid(raw) {
		for _, b := range raw {
			if b >= utf8.RuneSelf && !utf8.Valid([]byte{b}) {
				return "", fmt.Errorf("holds byte 0x%02x, which is not UTF-8: a pull spec is ASCII", b)
			}
		}
	}
	v, ok := literal(w)
	if !ok {
		return "", fmt.Errorf("is not a literal word: expected a quoted or plain pull spec, not a variable or substitution")
	}
	if e := expanded(w); e != "" {
		return "", fmt.Errorf("is not a literal word: bash would apply %s to it; quote it", e)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("holds a control character: expected a pull spec")
	}
	return v, nil
}

// specFor is the spec whose scripts include base and whose sub-command is sub (any when sub
// is ""); nil when none.
func (r *reader) specFor(base, sub string) *Spec {
	for i := range r.specs {
		if slices.Contains(r.specs[i].Scripts, base) && (sub == "" || r.specs[i].Sub == sub) {
			return &r.specs[i]
		}
	}
	return nil
}

// unknown refuses a command this reader does not know: it could run anything, rebase.sh too.
func (r *reader) unknown(name string, words []*syntax.Word) error {
	for _, w := range words[1:] {
		v := literalOr(w, r.source(w))
		for _, s := range r.specs {
			for _, script := range s.Scripts {
				if strings.Contains(v, script) {
					return r.errorf(words[0], "`%s` runs %s: a record's command is read only as a plain command (run directly, or through bash, sh, command or exec); write it on its own line", name, script)
				}
			}
		}
	}
	return r.errorf(words[0], "`%s` is not a command a record runs: it could run anything, %s too, so the record cannot be read without running it; a record holds its %s command with comments, echo, printf, cd, set and variable assignments around it",
		name, r.what(), r.what())
}

// what names the invocation for messages ("rebase.sh to").
func (r *reader) what() string {
	if len(r.specs) == 0 || len(r.specs[0].Scripts) == 0 {
		return "the rebase"
	}
	return r.specs[0].Scripts[0] + " " + r.specs[0].Sub
}

// redirect refuses a redirection that writes to a file this reader cannot name, or to the
// script a record runs (which would change what the invocation runs).
func (r *reader) redirect(rd *syntax.Redirect) error {
	switch rd.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.DplOut:
	default:
		return nil
	}
	target, ok := literal(rd.Word)
	if rd.Op == syntax.DplOut && (target == "-" || strings.Trim(target, "0123456789") == "") {
		return nil
	}
	if !ok {
		return r.errorf(rd, "writes to %s, an expansion: which file it overwrites cannot be read from the file", r.source(rd.Word))
	}
	if r.specFor(baseName(target), "") != nil {
		return r.errorf(rd, "writes to %s, the script a record runs; remove the redirection", target)
	}
	return nil
}

// construct names the compound a top-level statement is, for messages.
func construct(st *syntax.Stmt) string {
	switch {
	case st.Background:
		return "a background job"
	case st.Negated:
		return "a negated command"
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr, *syntax.DeclClause:
		return "a command or process substitution"
	case *syntax.IfClause:
		return "an if"
	case *syntax.WhileClause:
		return "a while or until loop"
	case *syntax.ForClause:
		return "a for loop"
	case *syntax.CaseClause:
		return "a case"
	case *syntax.Block:
		return "a { } group"
	case *syntax.Subshell:
		return "a ( ) subshell"
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return "a pipeline"
		}
		return "an && or || list"
	case *syntax.TimeClause:
		return "a time command"
	}
	return "a compound command"
}
