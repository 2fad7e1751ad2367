package era

import "github.com/lvms-rebase/lvms-rebase/rebase/option"

// The LVMS choices that are not the policy's (Choose): a minor the caller forces, the minor
// of a pinned bundle, and the choice a lock file's recorded rule gives again (--check).

// Forced is the choice a caller's forced minor makes (the library's LVMS option).
func Forced(minor string) Choice {
	return Choice{Minor: minor, Rule: "flag", Reason: "forced: LVMS " + minor + " was asked for"}
}

// Pinned is the choice a pinned bundle makes: its CSV's minor (empty until the bundle has
// been read).
func Pinned(minor string) Choice {
	return Choice{Minor: minor, Rule: "bundle", Reason: "the minor of the pinned bundle"}
}

// legacyReason is how locks written before November 2026 worded a forced or pinned choice:
// with the option as the front end spells it (the CLI's flag), which --check still accepts.
func legacyReason(rule, minor string) string {
	if rule == "flag" {
		return "forced with " + option.LVMS.String() + " " + minor
	}
	return "the minor of the bundle pinned with " + option.LVMSBundle.String()
}

// Locked is the choice a lock's recorded LVMS rule (rule, reason) gives for the bundle it
// pins (of minor, its CSV's), for --check to compare with what the lock records: an edited
// minor, rule or reason differs from it. The policy is applied as if that minor were the only
// one published, which gives a policy choice back exactly (exact, newest-below and pinned
// depend only on the OpenShift minor and the minor chosen); a minor the policy would never
// pick gives the policy's refusal as the reason.
func Locked(ocp, rule, reason, minor string) Choice {
	var c Choice
	switch rule {
	case "flag":
		c = Forced(minor)
	case "bundle":
		c = Pinned(minor)
	}
	if c.Rule != "" {
		if reason == legacyReason(c.Rule, minor) {
			c.Reason = reason
		}
		return c
	}
	c, err := Choose(ocp, []string{minor})
	if err != nil {
		return Choice{Minor: minor, Rule: "none", Reason: err.Error()}
	}
	c.Warning = ""
	return c
}
