package rebase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/lvms-rebase/lvms-rebase/internal/graph"
	"github.com/lvms-rebase/lvms-rebase/internal/warntee"
	"github.com/lvms-rebase/lvms-rebase/rebase/lock"
	"github.com/lvms-rebase/lvms-rebase/rebase/recorded"
	"github.com/lvms-rebase/lvms-rebase/rebase/source"
)

// run is what one rebase settled before its steps start, and what every step reads: the
// options (OpenShift minor, payload rule and pins settled), the image source and its
// architectures, what the tree held before the run (the lock, the release JSONs preflight
// read, the records for the PR body's "before"), and the warnings the source logs.
type run struct {
	opts   Options
	log    *slog.Logger
	src    *source.Source
	arches []string
	// old is the lock found in the tree before the run.
	old *lock.Lock
	// releaseData are the tree's release JSONs per arch, read and checked by preflight.
	releaseData map[string][]byte
	// recorded is what the tree recorded before the run (the PR body's "before").
	recorded *recorded.Recorded
	// payloadRule and payloadSource are the payload rule chosen before resolution.
	payloadRule, payloadSource string
	// warned are the warnings of the run outside its steps: the recovery of an earlier
	// write, and what the source logs as it works (retries), in the order they came.
	warned warnings
	// verification checks the signatures of what the run writes (verify.go).
	verification *verification
}

// hooks log the steps: at the default verbosity one line when a step ends, with the time it
// worked; -v 1 (a record at V(1) has slog level -1) adds when it starts. Each record carries
// the step's name (phase), the time it worked (took) and, unless the step simply ended, its
// state (start, stopped, failed, drift): the CLI's plain lines are made of them. Each warning is
// logged once, where it arises. The error of a failed step is returned and printed once by
// the caller, not logged here too; a step stopped by an earlier failure logs only at -v 1.
func (r *run) hooks() graph.Hooks {
	return graph.Hooks{
		Start: func(s *graph.Step) {
			r.log.Log(context.Background(), slog.Level(-1), "phase "+s.Name(), "phase", s.Name(), "state", "start")
		},
		Warn: func(_ *graph.Step, msg string) { r.log.Warn(msg) },
		End: func(s *graph.Step, err error) {
			name, took := s.Name(), s.Took().Round(time.Microsecond).String()
			switch {
			case errors.Is(err, ErrDrift):
				// Drift is --check's answer, not a failure of the tool.
				r.log.Warn("phase "+name+": drift found", "phase", name, "took", took, "state", "drift")
			case err != nil && s.Stopped():
				r.log.Log(context.Background(), slog.Level(-1), "phase "+name+" stopped", "phase", name, "took", took, "state", "stopped")
			case err != nil:
				r.log.Error("phase "+name+" failed", "phase", name, "took", took, "state", "failed")
			default:
				r.log.Info("phase "+name+" done", "phase", name, "took", took)
			}
		},
	}
}

// warnings is a list of warnings that several goroutines add to.
type warnings struct {
	mu   sync.Mutex
	list []string
}

// add appends msg.
func (w *warnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, msg)
}

// all is a copy of the list.
func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.list)
}

// sourceLogger is the source's logger with its warnings recorded as the run's.
func (r *run) sourceLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return slog.New(warntee.New(l.Handler(), r.warned.add))
}

// pinsDisagree turns a resolution error of --check whose cause is the lock itself into
// drift, the lock differing from what its inputs give: a pinned payload that is not the
// version its tag or the lock's OpenShift minor says (source.MismatchError), or a pinned
// digest the registry does not have (source.UnknownDigestError).
func (r *run) pinsDisagree(err error) (lockDrift []string, _ error) {
	var mm *source.MismatchError
	var ud *source.UnknownDigestError
	if r.opts.Mode != ModeCheck || (!errors.As(err, &mm) && !errors.As(err, &ud)) {
		return nil, err
	}
	return []string{err.Error()}, fmt.Errorf("%w: lock file %s: %v", ErrDrift, lock.Path, err)
}

// payloadRef is the payload reference of arch, for messages.
func payloadRef(res *source.Resolution, arch string) string {
	for _, p := range res.Payloads {
		if p.Arch == arch {
			return p.Ref
		}
	}
	return arch
}
