package topdown

// T is used by a.go.
type T struct{ F int }

// M is a method a.go calls.
func (T) M() int { return 1 }
