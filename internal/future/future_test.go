package future

import (
	"errors"
	"testing"
	"time"
)

// TestValue: Wait blocks until the first Set; later Sets and Fails change nothing.
func TestValue(t *testing.T) {
	v := New[int]()
	got := make(chan int)
	go func() {
		n, _ := v.Wait()
		got <- n
	}()
	select {
	case n := <-got:
		t.Fatalf("Wait returned %d before Set", n)
	case <-time.After(20 * time.Millisecond):
	}
	v.Set(1, nil)
	v.Set(2, nil)
	v.Fail(errors.New("late"))
	if n := <-got; n != 1 {
		t.Errorf("Wait = %d, want 1", n)
	}
	if n, err := v.Wait(); n != 1 || err != nil {
		t.Errorf("Wait = %d, %v; want 1, nil", n, err)
	}
}

// TestStopAfter: the steps not yet set report ErrStopped wrapping the cause; a set step keeps
// its outcome; a nil error stops nothing.
func TestStopAfter(t *testing.T) {
	cause := errors.New("tag list: 403")
	done, pending, untouched := New[string](), New[string](), New[string]()
	done.Set("ok", nil)
	StopAfter(nil, untouched)
	StopAfter(cause, done, pending)
	if s, err := done.Wait(); s != "ok" || err != nil {
		t.Errorf("set step = %q, %v; want ok, nil", s, err)
	}
	if _, err := pending.Wait(); !errors.Is(err, ErrStopped) || !errors.Is(err, cause) {
		t.Errorf("pending step error %v, want ErrStopped wrapping %v", err, cause)
	}
	untouched.Set("later", nil)
	if s, _ := untouched.Wait(); s != "later" {
		t.Errorf("StopAfter(nil) set a step: %q", s)
	}
}
