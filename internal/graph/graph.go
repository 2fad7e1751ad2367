// Package graph runs one job as a graph of named steps. A step is one function with typed
// inputs — the outputs of steps declared before it — and one typed output; it starts as soon
// as its inputs are ready, so independent steps overlap without lanes written by hand, and a
// new step is one declaration (Add0 … Add5).
//
// What a run reports does not depend on scheduling. Steps are reported in the order they were
// declared, each with the time it worked (from its inputs being ready to its end, never the
// time it waited for them). The error of a failed graph is that of the first step, in that
// order, that failed by itself. So a step that fails cancels the steps declared after it
// (their errors could never be the one reported), while those declared before it run on: one
// of them may still fail, and its error comes first. A step whose input failed does not run;
// its output reports ErrStopped wrapping the cause.
//
// Speculation: a step may also be declared while the graph runs, as an attempt (Attempt): it
// runs like any step but is not reported, and its failure fails nothing, until a Pick, a
// place in the declared order, chooses it; the attempts a pick passes over are dropped.
package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/future"
)

// ErrStopped is what a step reports when it did not run: an input failed, or a step declared
// before it failed by itself.
var ErrStopped = future.ErrStopped

// Hooks hear the steps as they run (a log): each step's start, its warnings, and its end with
// the time it worked. They are called from the steps' goroutines.
type Hooks struct {
	Start func(s *Step)
	Warn  func(s *Step, msg string)
	End   func(s *Step, err error)
}

// Graph is one run of steps. Declare the steps, then Run.
type Graph struct {
	ctx   context.Context
	hooks Hooks
	now   func() time.Time // the clock steps are timed with
	start chan struct{}
	wg    sync.WaitGroup

	mu sync.Mutex
	// order are the declared places, steps and picks; all are every step, attempts included.
	order []*place
	all   []*Step
	// failed is the place of the first step that failed by itself (len(order) when none).
	failed int
}

// place is one position of the declared order: a step, or a pick that is filled by the
// attempt it chose.
type place struct {
	step *Step // the step, or the attempt picked (nil until picked)
	pick bool
}

// New returns an empty graph whose steps run under ctx.
func New(ctx context.Context, hooks Hooks) *Graph {
	return &Graph{ctx: ctx, hooks: hooks, now: time.Now, start: make(chan struct{}), failed: 1 << 30}
}

// Step is one running step: its name, what it is fetching (for a message when the run is
// interrupted), its warnings and the time it worked.
type Step struct {
	g    *Graph
	name string
	pos  int // its place in the order; an attempt has the place of the first pick it may fill
	ctx  context.Context
	stop context.CancelCauseFunc

	mu       sync.Mutex
	fetching string
	warnings []string
	// attempt is set for a step outside the order; its warnings are told once it is picked
	// (told counts those told).
	attempt, picked bool
	told            int
	took            time.Duration
	early           [][2]time.Time // Worked
	ran             bool
	err             error
}

// Name is the step's name.
func (s *Step) Name() string { return s.name }

// Fetch names the input the step is fetching now, for the message of an interrupted run.
func (s *Step) Fetch(what string) {
	s.mu.Lock()
	s.fetching = what
	s.mu.Unlock()
}

// Fetching is the input the step said it was fetching last, or "".
func (s *Step) Fetching() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetching
}

// Warn records a warning of the step and tells the Warn hook at once (an attempt's once it is
// picked: a dropped attempt's warnings are never told).
func (s *Step) Warn(msg string) {
	s.mu.Lock()
	s.warnings = append(s.warnings, msg)
	s.mu.Unlock()
	s.tell()
}

// tell tells the Warn hook the warnings not told yet, when the step counts.
func (s *Step) tell() {
	s.mu.Lock()
	var msgs []string
	if !s.attempt || s.picked {
		msgs = s.warnings[s.told:]
		s.told = len(s.warnings)
	}
	s.mu.Unlock()
	for _, m := range msgs {
		if s.g.hooks.Warn != nil {
			s.g.hooks.Warn(s, m)
		}
	}
}

// Record records a warning of the step that was already told (logged where it arose).
func (s *Step) Record(msg string) {
	s.mu.Lock()
	s.warnings = append(s.warnings, msg)
	if s.told == len(s.warnings)-1 {
		s.told++
	}
	s.mu.Unlock()
}

// Warnings are the step's warnings in the order it recorded them.
func (s *Step) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// Stopped tells whether the step was stopped because a step placed before it failed.
func (s *Step) Stopped() bool {
	return errors.Is(context.Cause(s.ctx), ErrStopped)
}

// Worked records work done for the step from one time to another outside its function, before
// its inputs were all ready: work started early, in the background, on an event of another step
// (a payload's signature check, started as soon as the payload's manifest named its digest).
// Took then counts that time too, and time the step only waited for it not at all.
func (s *Step) Worked(from, to time.Time) {
	if to.Before(from) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.early = append(s.early, [2]time.Time{from, to})
}

// Took is the time the step worked: from its inputs being ready to its end, and what Worked
// recorded (the union of those intervals).
func (s *Step) Took() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.took
}

// Err is the step's own error (nil while it runs, or when it succeeded or did not run).
func (s *Step) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Out is a step's output: its value once the step ended, or the step's error.
type Out[T any] struct {
	step *Step
	pos  int
	v    *future.Value[T]
}

// Wait blocks until the step ended (or was stopped) and returns its outcome.
func (o *Out[T]) Wait() (T, error) { return o.v.Wait() }

// Pos is the output's place in the declared order, for Attempt.
func (o *Out[T]) Pos() int { return o.pos }

// input is an Out of any type.
type input interface{ wait() error }

func (o *Out[T]) wait() error {
	_, err := o.v.Wait()
	return err
}

// Scope declares steps: the graph (steps in the order) or Attempt (steps outside it).
type Scope interface {
	declare(name string) *Step
}

// declare places a step at the end of the order.
func (g *Graph) declare(name string) *Step {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.newStep(name, len(g.order))
	g.order = append(g.order, &place{step: s})
	return s
}

// newStep makes a step at pos with its own context; g.mu is held. A step placed after a
// failure is stopped before it starts.
func (g *Graph) newStep(name string, pos int) *Step {
	s := &Step{g: g, name: name, pos: pos}
	s.ctx, s.stop = context.WithCancelCause(g.ctx)
	if pos > g.failed {
		s.stop(ErrStopped)
	}
	g.all = append(g.all, s)
	return s
}

// attempts declares steps outside the order, at the place of a pick.
type attempts struct {
	g   *Graph
	pos int
}

func (a attempts) declare(name string) *Step {
	a.g.mu.Lock()
	defer a.g.mu.Unlock()
	s := a.g.newStep(name, a.pos)
	s.attempt = true
	return s
}

// Attempt is the scope of speculative steps that picks at pos (Out.Pos of the first) may
// choose: they run at once, but count (are reported, fail the graph) only once picked. A
// failure before pos cancels them like the steps after it.
func (g *Graph) Attempt(pos int) Scope { return attempts{g: g, pos: pos} }

// add declares a step named name in sc that runs f once every input is ready.
func add[R any](sc Scope, name string, inputs []input, f func(context.Context, *Step) (R, error)) *Out[R] {
	s := sc.declare(name)
	out := &Out[R]{step: s, pos: s.pos, v: future.New[R]()}
	g := s.g
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		<-g.start
		for _, in := range inputs {
			if err := in.wait(); err != nil {
				out.v.Fail(fmt.Errorf("%w: %w", ErrStopped, err))
				return
			}
		}
		if s.Stopped() {
			out.v.Fail(fmt.Errorf("%w: a step before %s failed", ErrStopped, name))
			return
		}
		v, err := runStep(s, f)
		out.v.Set(v, err)
	}()
	return out
}

// runStep runs the step, times it and tells the hooks; a step of the order that fails stops
// the steps placed after it.
func runStep[R any](s *Step, f func(context.Context, *Step) (R, error)) (R, error) {
	g := s.g
	if g.hooks.Start != nil {
		g.hooks.Start(s)
	}
	start := g.now()
	v, err := f(s.ctx, s)
	s.mu.Lock()
	s.took, s.ran, s.err = unionLength(append(s.early, [2]time.Time{start, g.now()})), true, err
	s.mu.Unlock()
	if g.hooks.End != nil {
		g.hooks.End(s, err)
	}
	if err != nil && g.counts(s) {
		g.failAt(s.pos)
	}
	return v, err
}

// unionLength is the time the intervals cover together.
func unionLength(spans [][2]time.Time) time.Duration {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var total time.Duration
	var end time.Time
	for i, sp := range spans {
		switch {
		case i == 0 || sp[0].After(end):
			total += sp[1].Sub(sp[0])
			end = sp[1]
		case sp[1].After(end):
			total += sp[1].Sub(end)
			end = sp[1]
		}
	}
	return total
}

// counts tells whether s is in the order (an attempt counts once picked).
func (g *Graph) counts(s *Step) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return s.pos < len(g.order) && g.order[s.pos].step == s
}

// failAt records a failure at pos and stops every step placed after it.
func (g *Graph) failAt(pos int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if pos >= g.failed {
		return
	}
	g.failed = pos
	for _, s := range g.all {
		if s.pos > pos {
			s.stop(ErrStopped)
		}
	}
}

// Add0 declares a step without inputs.
func Add0[R any](sc Scope, name string, f func(context.Context, *Step) (R, error)) *Out[R] {
	return add(sc, name, nil, f)
}

// Add1 declares a step of one input.
func Add1[A, R any](sc Scope, name string, a *Out[A], f func(context.Context, *Step, A) (R, error)) *Out[R] {
	return add(sc, name, []input{a}, func(ctx context.Context, s *Step) (R, error) {
		av, _ := a.Wait()
		return f(ctx, s, av)
	})
}

// Add2 declares a step of two inputs.
func Add2[A, B, R any](sc Scope, name string, a *Out[A], b *Out[B], f func(context.Context, *Step, A, B) (R, error)) *Out[R] {
	return add(sc, name, []input{a, b}, func(ctx context.Context, s *Step) (R, error) {
		av, _ := a.Wait()
		bv, _ := b.Wait()
		return f(ctx, s, av, bv)
	})
}

// Add3 declares a step of three inputs.
func Add3[A, B, C, R any](sc Scope, name string, a *Out[A], b *Out[B], c *Out[C], f func(context.Context, *Step, A, B, C) (R, error)) *Out[R] {
	return add(sc, name, []input{a, b, c}, func(ctx context.Context, s *Step) (R, error) {
		av, _ := a.Wait()
		bv, _ := b.Wait()
		cv, _ := c.Wait()
		return f(ctx, s, av, bv, cv)
	})
}

// Add4 declares a step of four inputs.
func Add4[A, B, C, D, R any](sc Scope, name string, a *Out[A], b *Out[B], c *Out[C], d *Out[D], f func(context.Context, *Step, A, B, C, D) (R, error)) *Out[R] {
	return add(sc, name, []input{a, b, c, d}, func(ctx context.Context, s *Step) (R, error) {
		av, _ := a.Wait()
		bv, _ := b.Wait()
		cv, _ := c.Wait()
		dv, _ := d.Wait()
		return f(ctx, s, av, bv, cv, dv)
	})
}

// Add5 declares a step of five inputs.
func Add5[A, B, C, D, E, R any](sc Scope, name string, a *Out[A], b *Out[B], c *Out[C], d *Out[D], e *Out[E], f func(context.Context, *Step, A, B, C, D, E) (R, error)) *Out[R] {
	return add(sc, name, []input{a, b, c, d, e}, func(ctx context.Context, s *Step) (R, error) {
		av, _ := a.Wait()
		bv, _ := b.Wait()
		cv, _ := c.Wait()
		dv, _ := d.Wait()
		ev, _ := e.Wait()
		return f(ctx, s, av, bv, cv, dv, ev)
	})
}

// Pick declares a place in the order that the attempt choose returns fills, once a is ready:
// it is reported as that step (name, time, warnings), its failure is the graph's, and it
// gives that step's output. choose may declare the attempt itself (Attempt(Pos of the first
// pick)) or return one declared earlier; it runs on the pick's goroutine, and must return
// an Out of an attempt.
func Pick[A, R any](g *Graph, a *Out[A], choose func(A) *Out[R]) *Out[R] {
	g.mu.Lock()
	pl := &place{pick: true}
	pos := len(g.order)
	g.order = append(g.order, pl)
	g.mu.Unlock()
	out := &Out[R]{pos: pos, v: future.New[R]()}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		<-g.start
		av, err := a.Wait()
		if err != nil {
			out.v.Fail(fmt.Errorf("%w: %w", ErrStopped, err))
			return
		}
		chosen := choose(av)
		g.mu.Lock()
		pl.step = chosen.step
		g.mu.Unlock()
		chosen.step.mu.Lock()
		chosen.step.picked = true
		chosen.step.mu.Unlock()
		chosen.step.tell()
		v, err := chosen.Wait()
		if err != nil && !errors.Is(err, ErrStopped) {
			g.failAt(pos)
		}
		out.v.Set(v, err)
	}()
	return out
}

// Run starts the declared steps and waits until every step, attempts included, has ended.
// It returns the error of the first step in the order that failed by itself, with that step
// (nil, nil when none failed).
func (g *Graph) Run() (*Step, error) {
	close(g.start)
	g.wg.Wait()
	for _, pl := range g.order {
		if pl.step == nil {
			continue
		}
		if err := pl.step.Err(); err != nil && !errors.Is(err, ErrStopped) {
			return pl.step, err
		}
	}
	return nil, nil
}

// Steps are the steps that ran, in the declared order (a pick as the attempt it chose);
// call it after Run.
func (g *Graph) Steps() []*Step {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*Step
	for _, pl := range g.order {
		if s := pl.step; s != nil {
			s.mu.Lock()
			ran := s.ran
			s.mu.Unlock()
			if ran {
				out = append(out, s)
			}
		}
	}
	return out
}
