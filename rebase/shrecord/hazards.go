package shrecord

import (
	"fmt"
	"slices"

	"mvdan.cc/sh/v3/syntax"
)

// setFlags applies the options of `set` (or of the '#!' line) that decide whether bash runs
// what follows: -e/errexit and -u/nounset are tracked; -n/noexec and -t/onecmd are returned
// as why bash may stop running commands. by says where, for messages.
func (r *reader) setFlags(args []string, by string, top bool) string {
	why := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		for _, f := range a[1:] {
			name := string(f)
			if f == 'o' {
				if i+1 >= len(args) {
					continue
				}
				i++
				name = args[i]
			}
			if w := r.option(name, a[0] == '-', by, top); why == "" {
				why = w
			}
		}
	}
	return why
}

// option applies one shell option. Only a plain top-level command certainly turns one off;
// anywhere else an option is taken as turned on, which may stop the script, never as off.
func (r *reader) option(name string, on bool, by string, top bool) string {
	flag := func(f *bool, c byte) {
		switch {
		case on && !*f:
			*f, r.setBy[c] = true, by
		case !on && top:
			*f = false
		}
	}
	switch name {
	case "e", "errexit":
		flag(&r.errexit, 'e')
	case "u", "nounset":
		flag(&r.nounset, 'u')
	case "n", "noexec":
		if on {
			return "set -n: bash reads what follows without running it"
		}
	case "t", "onecmd":
		if on {
			return "set -t: bash exits after the next command"
		}
	}
	return ""
}

// literals are the literal values of words ("" for a word with an expansion).
func literals(words []*syntax.Word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = literalOr(w, "")
	}
	return out
}

// param is the hazard of a parameter expansion: ${x:?} ends the script when x is unset or
// empty, and under set -u so does any expansion of a variable without a default.
func (r *reader) param(p *syntax.ParamExp) *hazard {
	line := int(p.Pos().Line())
	if p.Exp != nil && (p.Exp.Op == syntax.ErrorUnset || p.Exp.Op == syntax.ErrorUnsetOrNull) {
		return &hazard{line: line, why: fmt.Sprintf("${%s:?…} when %[1]s is unset", p.Param.Value)}
	}
	if !r.nounset || p.Param == nil || slices.Contains([]string{"@", "*", "#", "?", "-", "$", "!", "0"}, p.Param.Value) {
		return nil
	}
	if p.Exp != nil && slices.Contains([]syntax.ParExpOperator{syntax.DefaultUnset, syntax.DefaultUnsetOrNull,
		syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull}, p.Exp.Op) {
		return nil
	}
	return &hazard{line: line, why: fmt.Sprintf("under set -u (%s), $%s when it is unset", r.setBy['u'], p.Param.Value)}
}

// risk is why bash may end the script at a top-level statement before the invocation: what
// check found in it, or under set -e a command whose success is not certain.
func (r *reader) risk(st *syntax.Stmt, res result) *hazard {
	if res.ends != nil {
		return res.ends
	}
	if r.errexit && !certain(st) {
		return &hazard{line: int(st.Pos().Line()), why: fmt.Sprintf("under set -e (%s), a failing command", r.setBy['e'])}
	}
	return nil
}

// certain says a statement cannot fail in a way set -e acts on: a no-op, echo, set, an
// assignment without a command substitution, a declaration, a negated or background command,
// or an && / || list whose last command is one of these.
func certain(st *syntax.Stmt) bool {
	if st.Negated || st.Background {
		return true
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			subst := false
			syntax.Walk(c, func(n syntax.Node) bool {
				_, ok := n.(*syntax.CmdSubst)
				subst = subst || ok
				return !subst
			})
			return !subst
		}
		return slices.Contains([]string{":", "true", "echo", "set"}, literalOr(c.Args[0], ""))
	case *syntax.DeclClause:
		return c.Variant.Value != "local"
	case *syntax.BinaryCmd:
		return (c.Op == syntax.AndStmt || c.Op == syntax.OrStmt) && certain(c.Y)
	}
	return false
}
