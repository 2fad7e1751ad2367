package shrecord

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellFlags are the single-letter options of bash and sh that leave what a script file runs
// as it is (tracing, errexit and the like); -c and -s choose where the commands come from.
const shellFlags = "xveuETBCafhkpPHb"

// shellLong are the long options of bash (after their "--") that leave what a script file
// runs as it is.
var shellLong = []string{"norc", "noprofile", "posix"}

// shell reads `bash [options] script args`, `bash -c code` or `bash` reading its standard
// input; it returns the words of the script it runs when that is a record's script.
func (r *reader) shell(name string, words []*syntax.Word) ([]*syntax.Word, error) {
	i, code, stdin := 1, false, false
	for ; i < len(words); i++ {
		opt, ok := literal(words[i])
		switch {
		case !ok:
			return nil, r.errorf(words[i], "`%s`: the word %s is not literal: what it runs cannot be read from the file", name, r.source(words[i]))
		case opt == "--":
			i++
		case opt == "-o" || opt == "+o":
			i++
			continue
		case strings.HasPrefix(opt, "--"):
			if !slices.Contains(shellLong, opt[2:]) {
				return nil, r.errorf(words[i], "`%s` option %s: not read (it may change what bash runs)", name, opt)
			}
			continue
		case len(opt) > 1 && (opt[0] == '-' || opt[0] == '+'):
			for _, f := range opt[1:] {
				switch {
				case f == 'c':
					code = true
				case f == 's':
					stdin = true
				case !strings.ContainsRune(shellFlags, f):
					return nil, r.errorf(words[i], "`%s` option -%c: not read (it changes whether or how bash runs the script)", name, f)
				}
			}
			continue
		}
		break
	}
	switch {
	case code && i < len(words):
		return nil, r.codeWord(name+" -c", words[i], nil)
	case code:
		return nil, r.errorf(words[0], "`%s -c` without a command string", name)
	case stdin || i >= len(words):
		return nil, r.errorf(words[0], "`%s` reads its commands from standard input (a pipe, a here-document or here-string, or the terminal), which this reader does not evaluate; write the command itself", name)
	}
	if _, ok := literal(words[i]); !ok {
		return nil, r.errorf(words[i], "`%s`: the script %s is not literal: what it runs cannot be read from the file", name, r.source(words[i]))
	}
	if r.specFor(baseName(r.source(words[i])), "") == nil {
		return nil, r.errorf(words[i], "`%s %s` runs another file, which this reader does not read: a record holds its command itself", name, r.source(words[i]))
	}
	return words[i:], nil
}

// eval reads the code eval runs in the record's own shell: an exit there may end the script.
func (r *reader) eval(words []*syntax.Word, res *result) error {
	if len(words) < 2 {
		return nil
	}
	var parts []string
	for _, w := range words[1:] {
		v, ok := literal(w)
		if !ok {
			return r.errorf(w, "`eval`: the code %s is not literal: what it runs cannot be read from the file", r.source(w))
		}
		parts = append(parts, v)
	}
	return r.code("eval", strings.Join(parts, " "), words[0], func(ends bool) {
		if ends {
			res.ends = cmp(res.ends, &hazard{line: int(words[0].Pos().Line()), why: "eval runs an exit"})
		}
	})
}

// trap reads a trap's action as code. An action that may exit on ERR, DEBUG or RETURN can
// end the script at any later command.
func (r *reader) trap(words []*syntax.Word, res *result) error {
	args := words[1:]
	if len(args) > 0 && literalOr(args[0], "") == "--" {
		args = args[1:]
	}
	if len(args) < 2 || strings.HasPrefix(literalOr(args[0], ""), "-") {
		return nil // listing, or resetting to the default
	}
	if _, ok := literal(args[0]); !ok {
		return r.errorf(args[0], "`trap`: the action %s is not literal: what it runs cannot be read from the file", r.source(args[0]))
	}
	every := false
	for _, s := range args[1:] {
		v, ok := literal(s)
		every = every || !ok || slices.Contains([]string{"ERR", "DEBUG", "RETURN", "SIGERR", "SIGDEBUG", "SIGRETURN"}, strings.ToUpper(v))
	}
	return r.codeWord("trap", args[0], func(ends bool) {
		if ends && every {
			res.ends = cmp(res.ends, &hazard{line: int(words[0].Pos().Line()), why: "a trap on every failing or every command that may exit"})
		}
	})
}

// codeWord reads a literal word as code (a shell's -c string, a trap's action).
func (r *reader) codeWord(what string, w *syntax.Word, ends func(bool)) error {
	v, ok := literal(w)
	if !ok {
		return r.errorf(w, "`%s`: the code %s is not literal: what it runs cannot be read from the file", what, r.source(w))
	}
	return r.code(what, v, w, ends)
}

// code reads a code string as its own script: every command in it must be one this reader
// knows, and an invocation there is refused (a record's command is read only as a plain
// one). ends hears whether the code may end the shell running it.
func (r *reader) code(what, code string, at syntax.Node, ends func(bool)) error {
	site := &codeSite{line: int(at.Pos().Line()), what: what, depth: 1}
	if r.site != nil {
		site.line, site.depth = r.site.line, r.site.depth+1
	}
	if site.depth > maxCodeDepth {
		return r.errorf(at, "code strings (eval, bash -c, trap) nested more than %d deep: not read", maxCodeDepth)
	}
	sub := &reader{file: r.file, data: []byte(code), specs: r.specs, errexit: r.errexit, nounset: r.nounset, setBy: r.setBy, site: site}
	f, err := sub.parse(sub.data, site.depth)
	if err != nil {
		return err
	}
	may := false
	for _, st := range f.Stmts {
		res, err := sub.check(st)
		if err != nil {
			return err
		}
		if res.call != nil {
			return sub.errAt(0, "%s %s: a record's command is read only as a plain command on its own line, not through eval, bash -c or a trap", baseName(res.call.Script), res.call.Sub)
		}
		may = may || res.stop != "" || res.ends != nil
	}
	if what == "eval" { // eval runs in the record's shell: its options stay set
		r.errexit, r.nounset = r.errexit || sub.errexit, r.nounset || sub.nounset
	}
	if ends != nil {
		ends(may)
	}
	return nil
}

// shopt refuses alias expansion, under which any later word may run something else;
// `shopt -s -o` sets the options set -o sets.
func (r *reader) shopt(words []*syntax.Word, top bool) error {
	set, opts := false, false
	for _, w := range words[1:] {
		switch v := literalOr(w, ""); {
		case v == "-s":
			set = true
		case v == "-o":
			opts = true
		case v == "expand_aliases" && set:
			return r.errorf(w, "shopt -s expand_aliases: a record uses no aliases (one can stand in for any command that follows); remove it")
		case opts:
			r.option(v, set, fmt.Sprintf("line %d", w.Pos().Line()), top)
		}
	}
	return nil
}
