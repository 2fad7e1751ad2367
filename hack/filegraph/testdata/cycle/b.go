package cycle

// B uses a.go's C.
func B() int { return C }
