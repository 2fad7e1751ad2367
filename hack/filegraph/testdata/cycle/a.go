// Package cycle has two files that use each other.
package cycle

// A uses b.go's B.
func A() int { return B() + 1 }

// C is used by b.go.
const C = 1
