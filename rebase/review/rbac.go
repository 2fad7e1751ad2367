package review

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
)

// Escalation classes.
const (
	ClassSecrets      = "secrets"  // new access to secrets
	ClassWildcard     = "wildcard" // a "*" verb, resource, API group or URL
	ClassEscalateVerb = "escalate-bind-impersonate"
	ClassClusterWrite = "cluster-write" // new write access granted cluster-wide (ClusterRole)
	ClassNodesExec    = "nodes-exec"    // new nodes or pods/exec-class access
	ClassAdminBinding = "admin-binding" // a new binding to a cluster-admin-like role
)

// writeVerbs change objects.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "*"}

// nodeExecResources reach into nodes or into running containers.
var nodeExecResources = []string{"nodes", "nodes/proxy", "nodes/*", "pods/exec", "pods/attach", "pods/portforward", "pods/ephemeralcontainers"}

// adminRoles are the default roles that grant (nearly) everything.
var adminRoles = []string{"cluster-admin", "admin", "edit", "system:masters"}

// Finding is one RBAC change: the role or binding, the rule (as RuleString writes it) and, for
// an escalation, its class; for a plain change, "added" or "removed".
type Finding struct {
	Role  string
	Rule  string
	Class string
}

// EscalationPrefix starts the warning of each escalation (Finding.Warning), so that a reader
// of the warnings can tell them from the others (the CLI counts them on one line).
const EscalationPrefix = "security review: "

// Warning is the run's warning about an escalation: "security review: ROLE grants CLASS
// access: RULE".
func (f Finding) Warning() string {
	return fmt.Sprintf("%s%s grants %s access: %s", EscalationPrefix, f.Role, f.Class, f.Rule)
}

// RBAC is the review of the RBAC a rebase ships against the tree's.
type RBAC struct {
	// Changed: a role, binding or rule was added, removed or changed.
	Changed bool
	// Changes are the rules and bindings added and removed ("added"/"removed").
	Changes []Finding
	// Escalations are the added access a security review must look at.
	Escalations []Finding
}

// RuleString is the one-line form of a rule in findings and PR bodies.
func RuleString(r rbacv1.PolicyRule) string {
	groups := make([]string, len(r.APIGroups))
	for i, g := range r.APIGroups {
		groups[i] = g
		if g == "" {
			groups[i] = `""` // the core group, not "no group"
		}
	}
	s := fmt.Sprintf("apiGroups=%v resources=%v verbs=%v", groups, r.Resources, r.Verbs)
	if len(r.ResourceNames) > 0 {
		s += fmt.Sprintf(" resourceNames=%v", r.ResourceNames)
	}
	if len(r.NonResourceURLs) > 0 {
		s += fmt.Sprintf(" nonResourceURLs=%v", r.NonResourceURLs)
	}
	return s
}

type role struct {
	id    string
	kind  string
	rules []rbacv1.PolicyRule
}

type binding struct {
	id      string
	roleRef rbacv1.RoleRef
	subs    string
}

// ReviewRBAC compares the RBAC objects of old (the tree) and new (the rebase).
func ReviewRBAC(old, new []Object) (RBAC, error) {
	oldRoles, oldBindings, err := rbacOf(old)
	if err != nil {
		return RBAC{}, err
	}
	newRoles, newBindings, err := rbacOf(new)
	if err != nil {
		return RBAC{}, err
	}
	var rv RBAC
	for _, id := range keysOf(oldRoles, newRoles) {
		o, n := oldRoles[id], newRoles[id]
		added, removed := diffRules(o, n)
		for _, r := range removed {
			rv.Changes = append(rv.Changes, Finding{Role: id, Rule: RuleString(r), Class: "removed"})
		}
		for _, r := range added {
			rv.Changes = append(rv.Changes, Finding{Role: id, Rule: RuleString(r), Class: "added"})
			for _, c := range classify(n.kind, r, o) {
				rv.Escalations = append(rv.Escalations, Finding{Role: id, Rule: RuleString(r), Class: c})
			}
		}
	}
	for _, id := range keysOf(oldBindings, newBindings) {
		o, n := oldBindings[id], newBindings[id]
		if o != nil && n != nil && o.roleRef == n.roleRef && o.subs == n.subs {
			continue
		}
		if o != nil {
			rv.Changes = append(rv.Changes, Finding{Role: id, Rule: o.String(), Class: "removed"})
		}
		if n != nil {
			rv.Changes = append(rv.Changes, Finding{Role: id, Rule: n.String(), Class: "added"})
			if adminLike(n.roleRef, newRoles) {
				rv.Escalations = append(rv.Escalations, Finding{Role: id, Rule: n.String(), Class: ClassAdminBinding})
			} else {
				rv.Escalations = append(rv.Escalations, boundAccess(id, n, oldRoles, newRoles)...)
			}
		}
	}
	rv.Changed = len(rv.Changes) > 0
	return rv, nil
}

func (b *binding) String() string {
	return fmt.Sprintf("roleRef=%s/%s subjects=[%s]", b.roleRef.Kind, b.roleRef.Name, b.subs)
}

func rbacOf(objs []Object) (map[string]*role, map[string]*binding, error) {
	roles, bindings := map[string]*role{}, map[string]*binding{}
	for _, o := range objs {
		kind := o.Obj.GetKind()
		switch kind {
		case "ClusterRole", "Role":
			var r rbacv1.ClusterRole // Role has the same rules
			if err := jsonvalue.ToTyped(o.Obj.Object, &r); err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", o.File, o.ID(), err)
			}
			roles[o.ID()] = &role{id: o.ID(), kind: kind, rules: r.Rules}
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := jsonvalue.ToTyped(o.Obj.Object, &b); err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", o.File, o.ID(), err)
			}
			var subs []string
			for _, s := range b.Subjects {
				subs = append(subs, strings.TrimPrefix(s.Kind+" "+s.Namespace+"/"+s.Name, "/"))
			}
			slices.Sort(subs)
			bindings[o.ID()] = &binding{id: o.ID(), roleRef: b.RoleRef, subs: strings.Join(subs, ", ")}
		}
	}
	return roles, bindings, nil
}

func keysOf[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		out = append(out, k)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// diffRules returns the rules of n that o lacks and those of o that n lacks (by their
// one-line form; a nil role has no rules).
func diffRules(o, n *role) (added, removed []rbacv1.PolicyRule) {
	in := func(r *role, rule rbacv1.PolicyRule) bool {
		if r == nil {
			return false
		}
		return slices.ContainsFunc(r.rules, func(x rbacv1.PolicyRule) bool { return RuleString(x) == RuleString(rule) })
	}
	if n != nil {
		for _, r := range n.rules {
			if !in(o, r) {
				added = append(added, r)
			}
		}
	}
	if o != nil {
		for _, r := range o.rules {
			if !in(n, r) {
				removed = append(removed, r)
			}
		}
	}
	return added, removed
}

// classify returns the escalation classes of the access rule r grants beyond what the old
// role granted (none when the old role already covered all of it).
func classify(kind string, r rbacv1.PolicyRule, old *role) []string {
	var classes []string
	add := func(c string) {
		if !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	for _, a := range atoms(r) {
		if old != nil && covered(a, old.rules) {
			continue
		}
		if a.group == "*" || a.resource == "*" || a.verb == "*" || a.url == "*" {
			add(ClassWildcard)
		}
		if (a.resource == "secrets" || a.resource == "*") && (a.group == "" || a.group == "*") && a.url == "" {
			add(ClassSecrets)
		}
		if slices.Contains([]string{"escalate", "bind", "impersonate"}, a.verb) {
			add(ClassEscalateVerb)
		}
		if kind == "ClusterRole" && a.url == "" && slices.Contains(writeVerbs, a.verb) {
			add(ClassClusterWrite)
		}
		if slices.Contains(nodeExecResources, a.resource) && (a.group == "" || a.group == "*") {
			add(ClassNodesExec)
		}
	}
	return classes
}

// atom is one permission: a verb on a resource of a group (optionally one name), or a verb
// on a non-resource URL.
type atom struct{ group, resource, name, verb, url string }

func atoms(r rbacv1.PolicyRule) []atom {
	var out []atom
	names := r.ResourceNames
	if len(names) == 0 {
		names = []string{""}
	}
	for _, v := range r.Verbs {
		for _, u := range r.NonResourceURLs {
			out = append(out, atom{verb: v, url: u})
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, n := range names {
					out = append(out, atom{group: g, resource: res, name: n, verb: v})
				}
			}
		}
	}
	return out
}

func covered(a atom, rules []rbacv1.PolicyRule) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		if !has(r.Verbs, a.verb) {
			continue
		}
		if a.url != "" {
			if has(r.NonResourceURLs, a.url) {
				return true
			}
			continue
		}
		nameOK := len(r.ResourceNames) == 0 || (a.name != "" && slices.Contains(r.ResourceNames, a.name))
		if has(r.APIGroups, a.group) && has(r.Resources, a.resource) && nameOK {
			return true
		}
	}
	return false
}

// boundAccess classifies what a new or rebound binding grants through a role the tree
// already had (a new role's rules are classified as the role's own changes): its subjects
// gain every rule of it.
func boundAccess(id string, b *binding, oldRoles, newRoles map[string]*role) []Finding {
	r := boundRole(b, newRoles)
	if r == nil || oldRoles[r.id] == nil {
		return nil
	}
	kind := "Role" // a ClusterRole bound by a RoleBinding grants in one namespace
	if strings.HasPrefix(id, "ClusterRoleBinding ") {
		kind = "ClusterRole"
	}
	var out []Finding
	for _, rule := range r.rules {
		for _, c := range classify(kind, rule, nil) {
			out = append(out, Finding{Role: id, Rule: b.String() + " grants " + RuleString(rule), Class: c})
		}
	}
	return out
}

// boundRole finds the role a binding refers to: a ClusterRole by name, a Role in the
// binding's namespace.
func boundRole(b *binding, roles map[string]*role) *role {
	if b.roleRef.Kind == "ClusterRole" {
		return roles["ClusterRole "+b.roleRef.Name]
	}
	ns := strings.TrimPrefix(b.id, "RoleBinding ")
	if i := strings.Index(ns, "/"); i >= 0 {
		return roles["Role "+ns[:i]+"/"+b.roleRef.Name]
	}
	return nil
}

// adminLike reports whether a binding's role is a default admin role or a shipped role that
// grants every verb on every resource.
func adminLike(ref rbacv1.RoleRef, roles map[string]*role) bool {
	if slices.Contains(adminRoles, ref.Name) {
		return true
	}
	for _, r := range roles {
		if r.kind != ref.Kind || !strings.HasSuffix(r.id, "/"+ref.Name) && r.id != ref.Kind+" "+ref.Name {
			continue
		}
		for _, rule := range r.rules {
			if covered(atom{group: "*", resource: "*", verb: "*"}, []rbacv1.PolicyRule{rule}) {
				return true
			}
		}
	}
	return false
}
