package graph

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// names are the names of steps.
func names(steps []*Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name())
	}
	return out
}

// TestStepsRunWhenInputsAreReady: independent steps overlap (b starts while a waits for it),
// a step gets its inputs' values, and the steps are reported in the declared order whatever
// order they ended in.
func TestStepsRunWhenInputsAreReady(t *testing.T) {
	g := New(context.Background(), Hooks{})
	bStarted := make(chan struct{})
	a := Add0(g, "a", func(context.Context, *Step) (int, error) {
		<-bStarted // a ends only once b has started: they run at the same time
		return 1, nil
	})
	b := Add0(g, "b", func(context.Context, *Step) (string, error) {
		close(bStarted)
		return "x", nil
	})
	sum := Add2(g, "sum", a, b, func(_ context.Context, _ *Step, n int, s string) (string, error) {
		return s + string(rune('0'+n)), nil
	})
	if _, err := g.Run(); err != nil {
		t.Fatal(err)
	}
	if v, err := sum.Wait(); v != "x1" || err != nil {
		t.Errorf("sum = %q, %v; want x1", v, err)
	}
	if got := names(g.Steps()); !slices.Equal(got, []string{"a", "b", "sum"}) {
		t.Errorf("steps %v, want the declared order", got)
	}
}

// TestFirstDeclaredFailureIsReported: b fails first; a, declared before it, runs on and fails
// later, and its error is the graph's; c, declared after b, is cancelled at once (or never
// starts); d, whose input failed, never runs.
func TestFirstDeclaredFailureIsReported(t *testing.T) {
	g := New(context.Background(), Hooks{})
	bFailed := make(chan struct{})
	errA, errB := errors.New("a failed"), errors.New("b failed")
	a := Add0(g, "a", func(ctx context.Context, _ *Step) (int, error) {
		<-bFailed
		if ctx.Err() != nil {
			return 0, errors.New("a was cancelled by a later step's failure")
		}
		return 0, errA
	})
	Add0(g, "b", func(context.Context, *Step) (int, error) {
		defer close(bFailed)
		return 0, errB
	})
	cStopped := make(chan error, 1)
	Add0(g, "c", func(ctx context.Context, _ *Step) (int, error) {
		select {
		case <-ctx.Done():
			cStopped <- nil
			return 0, ctx.Err()
		case <-time.After(10 * time.Second):
			cStopped <- errors.New("c was not cancelled when b failed")
			return 0, nil
		}
	})
	d := Add1(g, "d", a, func(context.Context, *Step, int) (int, error) {
		t.Error("d ran although its input failed")
		return 0, nil
	})
	step, err := g.Run()
	if !errors.Is(err, errA) || step == nil || step.Name() != "a" {
		t.Fatalf("Run = %v, %v; want a's error", step, err)
	}
	select {
	case err := <-cStopped:
		if err != nil {
			t.Error(err)
		}
	default: // c had not started when b failed: it never ran
	}
	if _, err := d.Wait(); !errors.Is(err, ErrStopped) || !errors.Is(err, errA) {
		t.Errorf("d's output error %v, want ErrStopped wrapping a's", err)
	}
	if got := names(g.Steps()); !slices.Equal(got[:2], []string{"a", "b"}) || slices.Contains(got, "d") {
		t.Errorf("steps that ran %v, want a, b (and c if it had started)", got)
	}
}

// clock is a test's time: every reading moves it a millisecond, advance as much as a step worked.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

// fakeClock makes g read its time from a clock starting at the Unix epoch.
func fakeClock(g *Graph) *clock {
	c := &clock{now: time.Unix(0, 0)}
	g.now = func() time.Time { return c.advance(time.Millisecond) }
	return c
}

// advance moves the clock by d and returns the new time.
func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// TestTookIsWorkNotWaiting: a step's time starts when its inputs are ready. The clock moves
// only while slow works (an hour); quick, waiting for slow, must not count that hour.
func TestTookIsWorkNotWaiting(t *testing.T) {
	g := New(context.Background(), Hooks{})
	clk := fakeClock(g)
	slow := Add0(g, "slow", func(context.Context, *Step) (int, error) {
		clk.advance(time.Hour)
		return 1, nil
	})
	Add1(g, "quick", slow, func(context.Context, *Step, int) (int, error) { return 2, nil })
	if _, err := g.Run(); err != nil {
		t.Fatal(err)
	}
	steps := g.Steps()
	if steps[0].Took() < time.Hour || steps[1].Took() >= time.Hour {
		t.Errorf("took slow %v, quick %v: quick's time must not hold slow's", steps[0].Took(), steps[1].Took())
	}
}

// TestWorkedCountsEarlyWork: a step whose work ran in the background while an earlier step ran
// (Worked) reports that work and its own, not the time it waited between them; overlapping
// intervals count once.
func TestWorkedCountsEarlyWork(t *testing.T) {
	g := New(context.Background(), Hooks{})
	clk := fakeClock(g)
	var bg [2]time.Time
	slow := Add0(g, "slow", func(context.Context, *Step) (int, error) {
		// the background work runs from a minute to two minutes into slow's hour
		now := clk.advance(time.Hour).Add(-time.Hour)
		bg = [2]time.Time{now.Add(time.Minute), now.Add(2 * time.Minute)}
		return 1, nil
	})
	Add1(g, "verify", slow, func(_ context.Context, s *Step, _ int) (int, error) {
		s.Worked(bg[0], bg[1])
		s.Worked(bg[0].Add(30*time.Second), bg[1]) // overlapping: counted once
		return 2, nil
	})
	if _, err := g.Run(); err != nil {
		t.Fatal(err)
	}
	if took := g.Steps()[1].Took(); took < time.Minute || took > time.Minute+time.Second {
		t.Errorf("verify took %v, want its minute of background work and its own milliseconds", took)
	}
}

func TestUnionLength(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	for _, c := range []struct {
		spans [][2]time.Time
		want  time.Duration
	}{
		{nil, 0},
		{[][2]time.Time{{at(0), at(10)}}, 10 * time.Second},
		{[][2]time.Time{{at(20), at(30)}, {at(0), at(10)}}, 20 * time.Second},
		{[][2]time.Time{{at(0), at(10)}, {at(5), at(15)}}, 15 * time.Second},
		{[][2]time.Time{{at(0), at(10)}, {at(2), at(3)}}, 10 * time.Second},
	} {
		if got := unionLength(c.spans); got != c.want {
			t.Errorf("unionLength(%v) = %v, want %v", c.spans, got, c.want)
		}
	}
}

// TestPickCountsOnlyTheChosenAttempt: two attempts at one place, one failing; the pick
// chooses the other. The failed attempt fails nothing and is not reported, nor are its
// warnings told; the chosen one is reported in the pick's place with its warnings.
func TestPickCountsOnlyTheChosenAttempt(t *testing.T) {
	var told []string
	g := New(context.Background(), Hooks{Warn: func(_ *Step, msg string) { told = append(told, msg) }})
	var at map[string]*Out[int]
	key := Add0(g, "key", func(context.Context, *Step) (string, error) {
		_, _ = at["bad"].Wait() // the dropped attempt has failed before anything is picked
		return "good", nil
	})
	picked := Pick(g, key, func(k string) *Out[int] { return at[k] })
	after := Add1(g, "after", picked, func(_ context.Context, _ *Step, n int) (int, error) { return n + 1, nil })
	sc := g.Attempt(picked.Pos())
	at = map[string]*Out[int]{
		"bad": Add0(sc, "attempt", func(_ context.Context, s *Step) (int, error) {
			s.Warn("from the dropped attempt")
			return 0, errors.New("dropped attempt failed")
		}),
		"good": Add0(sc, "attempt", func(_ context.Context, s *Step) (int, error) {
			s.Warn("from the chosen attempt")
			return 41, nil
		}),
	}
	if _, err := g.Run(); err != nil {
		t.Fatalf("Run: %v (a dropped attempt's failure must fail nothing)", err)
	}
	if v, _ := after.Wait(); v != 42 {
		t.Errorf("after = %d, want 42 (the chosen attempt's output)", v)
	}
	steps := g.Steps()
	if got := names(steps); !slices.Equal(got, []string{"key", "attempt", "after"}) {
		t.Fatalf("steps %v, want key, attempt, after", got)
	}
	if w := steps[1].Warnings(); !slices.Equal(w, []string{"from the chosen attempt"}) || !slices.Equal(told, w) {
		t.Errorf("reported warnings %q, told %q; want only the chosen attempt's", w, told)
	}
}

// TestPickedAttemptsFailureIsTheGraphs: the chosen attempt's own error is the graph's, at the
// pick's place: a step declared after the pick is cancelled (or never starts).
func TestPickedAttemptsFailureIsTheGraphs(t *testing.T) {
	g := New(context.Background(), Hooks{})
	errAttempt := errors.New("attempt failed")
	key := Add0(g, "key", func(context.Context, *Step) (int, error) { return 0, nil })
	var attempt *Out[int]
	picked := Pick(g, key, func(int) *Out[int] { return attempt })
	laterStopped := make(chan bool, 1)
	Add0(g, "later", func(ctx context.Context, _ *Step) (int, error) {
		select {
		case <-ctx.Done():
			laterStopped <- true
		case <-time.After(10 * time.Second):
			laterStopped <- false
		}
		return 0, ctx.Err()
	})
	attempt = Add0(g.Attempt(picked.Pos()), "attempt", func(context.Context, *Step) (int, error) { return 0, errAttempt })
	step, err := g.Run()
	if !errors.Is(err, errAttempt) || step.Name() != "attempt" {
		t.Fatalf("Run = %v, %v; want the attempt's error", step, err)
	}
	select {
	case stopped := <-laterStopped:
		if !stopped {
			t.Error("the step after the pick was not cancelled by the chosen attempt's failure")
		}
	default: // it had not started: it never ran
	}
}
