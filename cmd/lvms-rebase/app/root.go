// Package app wires lvms-rebase's cobra commands to the library packages. It holds flag
// binding and exit-code mapping only; behaviour lives in rebase/, release/ and applier/.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lvms-rebase/lvms-rebase/internal/version"
)

// Exit codes shared by every command; CI jobs script against them.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	ExitDrift = 3
	// A run stopped by a signal exits as a shell reports a process killed by it (128+n), after
	// stopping cleanly.
	ExitSIGINT  = 130
	ExitSIGTERM = 143
)

// IOStreams are the streams a command reads and writes, injected so tests need no globals.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// ExitError carries a specific exit code out of a command's RunE.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.err }

// WithExitCode wraps err so that Main exits with code.
func WithExitCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitCodeError{code: code, err: err}
}

// exitQuietly ends the command with code and prints nothing more: the output already says
// why (--diff exits 3 after printing the differences; kubectl diff would exit 1, which here
// means an error).
func exitQuietly(code int) error { return &exitCodeError{code: code} }

// usageError marks flag and argument mistakes (exit 2).
func usageError(format string, args ...any) error {
	return WithExitCode(ExitUsage, fmt.Errorf(format, args...))
}

// NewRootCommand builds the command tree. The root command itself runs the rebase
// (`lvms-rebase --ocp X.Y`, rebase.go); the other commands are listed here, one file each.
// -v/--v and --log-format are persistent, so every command logs alike.
func NewRootCommand(streams IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "lvms-rebase",
		Short: "Refresh MicroShift's LVMS and CSI snapshot assets from an LVMS bundle and an OCP payload",
		Long: `lvms-rebase resolves the newest LVMS operator bundle and OCP release payload for an
OpenShift minor, turns them into plain manifests and image digests, renders them through
kustomize and writes them into a MicroShift checkout's assets/ with a lock file.`,
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetVersionTemplate("lvms-rebase {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return WithExitCode(ExitUsage, err)
	})
	useFlagNames()
	logs := &logFlags{}
	logs.addFlags(root.PersistentFlags())
	configureRebase(root, streams, logs)
	root.AddCommand(
		newResolveCommand(streams, logs),
		newOutdatedCommand(streams, logs),
		newApplyCommand(streams, logs),
		newLvmdCommand(streams),
		newVersionCommand(streams),
	)
	return root
}

// Main runs the root command with args and returns the process exit code.
func Main(args []string, streams IOStreams) int {
	root := NewRootCommand(streams)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) && ec.err == nil {
		return ec.code
	}
	// The only place an error is printed: commands return errors, cobra's printing is
	// silenced, and phase log records do not repeat them.
	code := ExitError
	switch {
	case ec != nil:
		code = ec.code
	case isCobraUsageError(err): // cobra reports unknown commands and bad args as plain errors
		code = ExitUsage
	}
	// Errors are redacted where they format a URL or reference (applier/redact); the
	// message is printed as it is.
	msg := err.Error()
	// Drift (exit 3) is --check's finding, not a failure of the tool: not an ERROR.
	level, prefix := slog.LevelError, "Error"
	if code == ExitDrift {
		level, prefix = slog.LevelWarn, "Drift"
	}
	if format, _ := root.PersistentFlags().GetString("log-format"); format == "json" {
		// With --log-format json every stderr line is JSON, the error included.
		slog.New(slog.NewJSONHandler(streams.ErrOut, &slog.HandlerOptions{ReplaceAttr: dropTime})).
			Log(context.Background(), level, msg, "exitCode", code)
		return code
	}
	fmt.Fprintf(streams.ErrOut, "%s: %s\n", prefix, msg)
	return code
}

// dropTime removes the wall-clock stamp from log records.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// commandContext derives the context a command runs under: cancelled on SIGINT/SIGTERM, so
// an interrupted run stops cleanly (and leaves the tree as it was), and bounded by timeout
// when it is positive. The cancellation cause says which ("interrupted by SIGINT", "--timeout
// 30m0s exceeded"), so the error can name it with the phase and input it stopped.
func commandContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cancel(interrupted{sig == syscall.SIGTERM})
		case <-done:
		}
	}()
	stop := func() {
		signal.Stop(sigs)
		close(done)
		cancel(context.Canceled)
	}
	if timeout <= 0 {
		return ctx, stop
	}
	tctx, tcancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("--timeout %s exceeded", timeout))
	return tctx, func() { tcancel(); stop() }
}

// interrupted is the cancellation cause of a command stopped by SIGINT or SIGTERM.
type interrupted struct{ term bool }

func (i interrupted) Error() string {
	if i.term {
		return "interrupted by SIGTERM"
	}
	return "interrupted by SIGINT"
}

// exitForInterrupt gives err the exit code of the signal that cancelled ctx, if one did:
// whatever the command stopped on, it stopped because it was told to.
func exitForInterrupt(ctx context.Context, err error) error {
	var in interrupted
	if err == nil || !errors.As(context.Cause(ctx), &in) {
		return err
	}
	if in.term {
		return WithExitCode(ExitSIGTERM, err)
	}
	return WithExitCode(ExitSIGINT, err)
}

// logFlags are the logging flags every command shares, spelled as kubectl's: -v/--v is the
// verbosity, an integer as klog's; a record logged at V(n) has slog level -n, so -v 4 and up
// shows debug records (slog.LevelDebug is -4). 0 shows phases and warnings.
type logFlags struct {
	verbosity int
	format    string
}

func (l *logFlags) addFlags(fs *pflag.FlagSet) {
	fs.IntVarP(&l.verbosity, "v", "v", 0, "log verbosity, as kubectl's: 0 phases and warnings, 4 and up debug records")
	fs.StringVar(&l.format, "log-format", "text", "log format on stderr: text or json")
}

// logger builds the stderr logger of --log-format and -v. Records carry no wall-clock stamp:
// phase lines have their own timings, and stamps would only add noise to CI logs.
func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	if l.verbosity < 0 {
		return nil, usageError("-v/--v: expected a verbosity of 0 or more, got %d", l.verbosity)
	}
	opts := &slog.HandlerOptions{
		Level: slog.Level(-l.verbosity),
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError("--log-format: expected text or json, got %q", l.format)
}
