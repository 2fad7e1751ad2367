// Package future holds the outcome of one step that other goroutines wait for: set once, by
// the goroutine doing the step; read by any number of waiters. A step's output in
// internal/graph is one.
package future

import (
	"errors"
	"fmt"
	"sync"
)

// Value is one step's outcome, set once.
type Value[T any] struct {
	once sync.Once
	done chan struct{}
	v    T
	err  error
}

// New returns a Value not set yet.
func New[T any]() *Value[T] { return &Value[T]{done: make(chan struct{})} }

// Set records the outcome; later calls are ignored.
func (f *Value[T]) Set(v T, err error) {
	f.once.Do(func() {
		f.v, f.err = v, err
		close(f.done)
	})
}

// Fail records err as the outcome.
func (f *Value[T]) Fail(err error) {
	var zero T
	f.Set(zero, err)
}

// Wait blocks until the outcome is set. The steps always end (they stop on their context), so
// it needs no context of its own.
func (f *Value[T]) Wait() (T, error) {
	<-f.done
	return f.v, f.err
}

// ErrStopped is what the steps after a failed one report. The failed step's own error comes
// first wherever the outcomes are reported in order, so it is never the one printed.
var ErrStopped = errors.New("an earlier step of this input failed")

// Failer is a Value of any type.
type Failer interface{ Fail(error) }

// StopAfter ends a chain of steps at err (nothing when err is nil): every step not yet set
// reports ErrStopped wrapping err.
func StopAfter(err error, steps ...Failer) {
	if err == nil {
		return
	}
	for _, s := range steps {
		s.Fail(fmt.Errorf("%w: %w", ErrStopped, err))
	}
}
