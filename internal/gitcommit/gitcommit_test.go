package gitcommit

import "testing"

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		"e81b8d42e39d4b853fb1a0b265169b81ba24a829": true,
		"abc1234":    true,
		"ABCDEF0":    true,
		"abc123":     false, // too short
		"":           false,
		"main":       false,
		"e81b8d4/..": false,
		"e81b8d42e39d4b853fb1a0b265169b81ba24a829e81b8d42e39d4b853fb1a0b265169b81": false, // 72 digits
	} {
		if got := Valid(s); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
	}
}
