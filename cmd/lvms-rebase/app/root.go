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

	"github.com/lvms-rebase/lvms-rebase/internal/plainlog"
	"github.com/lvms-rebase/lvms-rebase/internal/version"
	"github.com/lvms-rebase/lvms-rebase/internal/warntee"
	"github.com/lvms-rebase/lvms-rebase/rebase/review"
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
		Version:       version.String(),
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
	lf := &logFlags{}
	lf.addFlags(root.PersistentFlags())
	lf.markExclusive(root)
	root.PersistentPreRunE = validateFlags
	configureRebase(root, streams, lf)
	root.AddCommand(
		newResolveCommand(streams, lf),
		newOutdatedCommand(streams, lf),
		newApplyCommand(streams, lf),
		newLvmdCommand(streams),
		newVersionCommand(streams),
	)
	registerCompletions(root)
	markPathFlags(root)
	typeArgs(root)
	watchBlankItems(root)
	return root
}

// typeArgs makes the argument check of c and its subcommands return a usage error (exit 2) by
// type. cobra returns its argument errors (cobra.NoArgs, ExactArgs, an unknown command) as
// plain errors; Main tells exit codes apart by type only, never by text, which a path or a
// name could repeat ("dir accepts x").
func typeArgs(c *cobra.Command) {
	check := c.Args
	if check == nil {
		check = legacyArgs
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		var ec *exitCodeError
		if err == nil || errors.As(err, &ec) {
			return err
		}
		return WithExitCode(ExitUsage, err)
	}
	for _, sub := range c.Commands() {
		typeArgs(sub)
	}
}

// legacyArgs is cobra's check of a command that sets no Args: the root refuses an argument
// that names no subcommand (with cobra's suggestions), other commands take any arguments.
func legacyArgs(cmd *cobra.Command, args []string) error {
	if !cmd.HasSubCommands() || cmd.HasParent() || len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 && !cmd.DisableSuggestions {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return errors.New(msg)
}

// validateFlags runs cobra's checks of required flags and flag groups (MarkFlagRequired,
// MarkFlagsMutuallyExclusive, MarkFlagsRequiredTogether) before the command, so that a
// violation is a usage error (exit 2); cobra itself would run them later and return a plain
// error. A flag given an empty value is a usage error too (refuseBlankFlags).
func validateFlags(cmd *cobra.Command, _ []string) error {
	if err := refuseBlankFlags(cmd); err != nil {
		return err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	if err := emptyLists(cmd); err != nil {
		return err
	}
	return droppedBlankItems(cmd)
}

// Main runs the root command with args and returns the process exit code.
func Main(args []string, streams IOStreams) int {
	root := NewRootCommand(streams)
	// cobra adds its help and completion commands when it executes; added now, their argument
	// errors are typed as ours are.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	typeArgs(root)
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
	// Exit codes come from the error's type only: usage errors are typed where they arise (the
	// flag layer: SetFlagErrorFunc, typeArgs, validateFlags, usageError, the libraries'
	// *option.Error mapped by libraryError), everything else is an error of the run.
	code := ExitError
	if ec != nil {
		code = ec.code
	}
	// Errors are redacted where they format a URL or reference (applier/redact); the
	// message is printed as it is.
	msg := err.Error()
	// Drift (exit 3) is --check's finding, not a failure of the tool: not an ERROR.
	level, prefix := slog.LevelError, "Error"
	if code == ExitDrift {
		level, prefix = slog.LevelWarn, "Drift"
	}
	if logFormatOf(root, args) == logJSON {
		// With --log-format json every stderr line is JSON, the error included.
		slog.New(slog.NewJSONHandler(streams.ErrOut, &slog.HandlerOptions{ReplaceAttr: dropTime})).
			Log(context.Background(), level, msg, "exitCode", code)
		return code
	}
	fmt.Fprintf(streams.ErrOut, "%s: %s\n", prefix, msg)
	return code
}

// logFormatOf is the --log-format the command line asks for. A usage error may stop cobra
// before it parsed the flag (an unknown flag before it): then the arguments say it, so that
// with --log-format json the error is a JSON record too.
func logFormatOf(root *cobra.Command, args []string) string {
	if f := root.PersistentFlags().Lookup("log-format"); f != nil && f.Changed {
		return f.Value.String()
	}
	format := logPlain
	for i, a := range args {
		switch {
		case a == "--":
			return format
		case a == "--log-format" && i+1 < len(args):
			format = args[i+1]
		case strings.HasPrefix(a, "--log-format="):
			format = strings.TrimPrefix(a, "--log-format=")
		}
	}
	return format
}

// dropTime removes the wall-clock stamp from log records and names the verbosity levels
// between INFO and DEBUG as klog does (V1…V3), where slog would print DEBUG+3…DEBUG+1.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.Attr{}
	case slog.LevelKey:
		if l, ok := a.Value.Any().(slog.Level); ok && l > slog.LevelDebug && l < slog.LevelInfo {
			return slog.String(slog.LevelKey, fmt.Sprintf("V%d", -l))
		}
	}
	return a
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
// shows debug records (slog.LevelDebug is -4) and -v 6, 7 and 8 the registry requests, their
// headers and their bodies (internal/httplog). 0 shows one line per step and the warnings;
// -q/--quiet only warnings and errors.
type logFlags struct {
	verbosity int
	quiet     bool
	format    string
	// plain is the handler of --log-format plain once logger built it (its held warnings are
	// said when the command ends: flush); status is stderr on a terminal, shared by the log
	// lines and the transient progress line.
	plain  *plainlog.Handler
	status *statusWriter
}

// The --log-format values: plain lines for people (the default), logfmt records ("text", the
// default before plain lines, kept for the scripts that read it) and JSON records.
const (
	logPlain = "plain"
	logText  = "text"
	logJSON  = "json"
)

// logFormats lists the --log-format values, the default first.
func logFormats() []string { return []string{logPlain, logText, logJSON} }

func (l *logFlags) addFlags(fs *pflag.FlagSet) {
	fs.IntVarP(&l.verbosity, "v", "v", 0, "log verbosity, as kubectl's: 0 steps and warnings, 1 step starts and each warning in full, 4 debug records, 6 registry requests, 7 their headers, 8 their bodies (secrets masked)")
	fs.BoolVarP(&l.quiet, "quiet", "q", false, "warnings and errors only: no step lines, no progress, no text summary (-o json and yaml still print)")
	fs.StringVar(&l.format, "log-format", logPlain, "log format on stderr: plain (lines for people), text (logfmt records) or json (JSON records)")
}

// markExclusive declares -q and -v exclusive with cobra's flag groups (validated in
// validateFlags, so that a conflict is a usage error).
func (l *logFlags) markExclusive(root *cobra.Command) {
	root.MarkFlagsMutuallyExclusive("quiet", "v")
}

// level is the slog level of the flags: -q shows warnings and errors, -v N records at V(N).
func (l *logFlags) level() slog.Level {
	if l.quiet {
		return slog.LevelWarn
	}
	return slog.Level(-l.verbosity)
}

// logger builds the stderr logger of --log-format, -v and -q; each distinct warning is
// printed once (warntee.Once). Records carry no wall-clock stamp: step lines have their own
// timings, and stamps would only add noise to CI logs. Plain lines at the default verbosity
// count a security review's rules on one line (holdEscalations) that flush writes.
func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	if l.verbosity < 0 {
		return nil, usageError("-v/--v: expected a verbosity of 0 or more, got %d", l.verbosity)
	}
	opts := &slog.HandlerOptions{Level: l.level(), ReplaceAttr: dropTime}
	var h slog.Handler
	switch l.format {
	case logPlain:
		l.status = newStatusWriter(w)
		popts := plainlog.Options{Level: l.level()}
		if l.verbosity == 0 {
			popts.Hold, popts.Summary = holdEscalations()
		}
		l.plain = plainlog.New(l.status, popts)
		h = l.plain
	case logText:
		h = slog.NewTextHandler(w, opts)
	case logJSON:
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, usageError("--log-format: expected plain, text or json, got %q", l.format)
	}
	return slog.New(warntee.Once(h)), nil
}

// holdEscalations holds back the warnings of a security review (one per rule, dozens when a
// tree ships RBAC for the first time) and says them as one line with their count; -v 1 prints
// each, and -o json (rbac.escalations, warnings) and the PR body list every one.
func holdEscalations() (func(string) bool, func(int) string) {
	return func(text string) bool { return strings.HasPrefix(text, review.EscalationPrefix) },
		func(n int) string {
			return fmt.Sprintf("%s%d RBAC rules grant access a reviewer must check (-v 1 lists them, as do -o json and the PR body's Security review)", review.EscalationPrefix, n)
		}
}

// flush writes what the plain lines held back (holdEscalations); a command calls it when
// its run ended, before its result.
func (l *logFlags) flush() {
	if l.plain != nil {
		_ = l.plain.Flush()
	}
}
