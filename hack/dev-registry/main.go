// Command dev-registry serves the generated fixture images and snapshot-asset tarballs
// (testdata/, `make fixtures`) from an OCI registry on 127.0.0.1 until interrupted. It is
// what `make demo` runs; it lives here, not in lvms-rebase, so the shipped binary carries no
// fixtures or test registry. Repositories keep their upstream host as a path prefix, so a
// run points at it with the printed --mirror flags (which cover the snapshot files' raw URLs and the
// signature stores). It signs what it serves with keys generated when it starts and prints a
// --signature-policy file trusting them. The first output line is "ready HOST" for scripts to
// wait on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lvms-rebase/lvms-rebase/internal/testing/testregistry"
)

// Exit codes, as lvms-rebase's: 1 error, 2 usage.
const (
	exitError = 1
	exitUsage = 2
)

// options are the flag values.
type options struct {
	addr     string
	fixtures string
	username string
	password string
}

// errUsage marks flag mistakes (exit 2).
type errUsage struct{ error }

func usagef(format string, args ...any) error { return errUsage{fmt.Errorf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, serves until ctx ends and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = o.serve(ctx, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "dev-registry: %v\n", err)
	if errors.As(err, new(errUsage)) {
		return exitUsage
	}
	return exitError
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fl := flag.NewFlagSet("dev-registry", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen address (port 0 picks a free port)")
	fl.StringVar(&o.fixtures, "fixtures", "", "directory holding images/ and snapshot-assets/ (default: the checkout's testdata/)")
	fl.StringVar(&o.username, "username", "", "require HTTP basic auth with this user name")
	fl.StringVar(&o.password, "password", "", "password for --username (fixture credentials only; never a real secret)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage{err}
	}
	if fl.NArg() > 0 {
		return nil, usagef("unexpected argument %q (dev-registry takes flags only)", fl.Arg(0))
	}
	if (o.username == "") != (o.password == "") {
		return nil, usagef("--username and --password must be given together")
	}
	if !strings.HasPrefix(o.addr, "127.") && !strings.HasPrefix(o.addr, "localhost:") && !strings.HasPrefix(o.addr, "[::1]:") {
		return nil, usagef("--addr %q: dev-registry only listens on loopback (127.0.0.1:PORT)", o.addr)
	}
	return o, nil
}

// registryOptions turns the flags into testregistry options, checking --fixtures.
func (o *options) registryOptions(stderr io.Writer) (testregistry.Options, error) {
	opts := testregistry.Options{Addr: o.addr, Username: o.username, Password: o.password,
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }}
	if o.fixtures == "" {
		return opts, nil
	}
	st, err := os.Stat(o.fixtures)
	if err != nil || !st.IsDir() {
		return opts, usagef("--fixtures %q: expected a directory holding images/ and snapshot-assets/", o.fixtures)
	}
	opts.Fixtures = os.DirFS(o.fixtures)
	if _, err := fs.Stat(opts.Fixtures, "images"); err != nil {
		return opts, usagef("--fixtures %q: no images/ directory (generate one with hack/update-fixtures.sh)", o.fixtures)
	}
	return opts, nil
}

func (o *options) serve(ctx context.Context, stdout, stderr io.Writer) error {
	opts, err := o.registryOptions(stderr)
	if err != nil {
		return err
	}
	reg, err := testregistry.Start(opts)
	if err != nil {
		return fmt.Errorf("starting dev registry: %w", err)
	}
	defer reg.Close()
	fmt.Fprintf(stdout, "ready %s\n", reg.Host())
	fmt.Fprintf(stdout, "url %s\n", reg.URL())
	fmt.Fprintf(stdout, "mirror-flags %s\n", strings.Join(reg.MirrorFlags(), " "))
	fmt.Fprintf(stdout, "snapshot-assets %s\n", reg.SnapshotAssetsURL())
	fmt.Fprintf(stdout, "snapshot-files %s\n", reg.SnapshotFilesURL())
	// The signatures it serves are made with keys generated now; this policy trusts them.
	fmt.Fprintf(stdout, "signature-policy %s\n", reg.PolicyFile())
	<-ctx.Done()
	fmt.Fprintln(stderr, "dev-registry: shutting down")
	return reg.Close()
}
