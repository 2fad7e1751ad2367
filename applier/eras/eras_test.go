package eras

import (
	"slices"
	"testing"
)

func TestLookupArch(t *testing.T) {
	for _, tc := range []struct {
		name, microShift, goArch string
		ok                       bool
	}{
		{"x86_64", "x86_64", "amd64", true},
		{"amd64", "x86_64", "amd64", true},
		{"aarch64", "aarch64", "arm64", true},
		{"arm64", "aarch64", "arm64", true},
		{"s390x", "s390x", "s390x", true},
		{"riscv64", "", "", false},
	} {
		a, ok := LookupArch(tc.name)
		if ok != tc.ok || a.MicroShift != tc.microShift || a.GoArch != tc.goArch {
			t.Errorf("LookupArch(%q) = %+v, %v; want %s/%s, %v", tc.name, a, ok, tc.microShift, tc.goArch, tc.ok)
		}
	}
}

func TestDeclaredListsAreCopies(t *testing.T) {
	for name, list := range map[string]func() []ObjectRef{"LegacyTopoLVMObjects": LegacyTopoLVMObjects, "SnapshotWebhookObjects": SnapshotWebhookObjects, "LVMSObjects": LVMSObjects} {
		a := list()
		a[0].Name = "changed"
		if list()[0].Name == "changed" {
			t.Errorf("%s shares its backing array with callers", name)
		}
		for i, r := range a[1:] {
			if slices.ContainsFunc(a[i+2:], r.SameObject) {
				t.Errorf("%s lists %s twice", name, r)
			}
		}
	}
	if SnapshotWebhookObjects()[0].Kind != "ValidatingWebhookConfiguration" {
		t.Error("the applier identifies a shipped webhook by the first SnapshotWebhookObjects entry; it must be the ValidatingWebhookConfiguration")
	}
	if !ClusterScoped("ClusterRole") || ClusterScoped("Deployment") || ClusterScoped("") {
		t.Error("ClusterScoped: ClusterRole must be cluster-scoped, Deployment and the empty kind not")
	}
}
