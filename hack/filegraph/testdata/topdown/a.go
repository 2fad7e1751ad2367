// Package topdown has a file that uses a lower one, a method and a field included.
package topdown

// A uses b.go's T, its method and its field.
func A() int {
	var t T
	return t.M() + t.F
}
