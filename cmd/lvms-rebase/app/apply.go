package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/lvms-rebase/lvms-rebase/applier"
	"github.com/lvms-rebase/lvms-rebase/internal/httplog"
	"github.com/lvms-rebase/lvms-rebase/internal/output"
	"github.com/lvms-rebase/lvms-rebase/internal/safefile"
)

// applyFlags are the apply command's flag values.
type applyFlags struct {
	kubeconfig      string
	context         string
	assets          string
	arch            *archFlag
	lvmd            string
	config          string
	configDir       string
	prune           bool
	force           bool
	runtimeLvmdPath string
	volumeGroups    []string
	wait            bool
	waitTimeout     time.Duration
	timeout         time.Duration
	output          string
	logs            *logFlags
}

func newApplyCommand(streams IOStreams, logs *logFlags) *cobra.Command {
	f := &applyFlags{logs: logs, arch: newArch()}
	cmd := &cobra.Command{
		Use:   "apply --assets DIR [--kubeconfig FILE]",
		Short: "Apply MicroShift's storage assets (LVMS or TopoLVM, CSI snapshots) to a cluster, as MicroShift does at start-up",
		Long: `apply runs the runtime applier MicroShift embeds against any cluster: it reads the storage
section of --config and the lvmd config (--lvmd, or defaults from the host's volume groups),
renders the assets under --assets (a MicroShift assets/ directory) with the images of --arch,
and applies them with server-side apply. Objects already in the desired state are not written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runApply(cmd.Context(), streams, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the target cluster (default: $KUBECONFIG, a list as for kubectl, else ~/.kube/config)")
	fl.StringVar(&f.context, "context", "", "kubeconfig context to use (default: the current context)")
	fl.StringVar(&f.assets, "assets", "", "MicroShift assets/ directory (components/lvms, components/csi-snapshot-controller, release)")
	fl.Var(f.arch, "arch", "architecture whose release JSON supplies the images: x86_64 or aarch64 (default: this machine's)")
	fl.StringVar(&f.lvmd, "lvmd", applier.DefaultLvmdPath, "lvmd config file; when absent the volume groups reported by vgs decide")
	fl.StringVar(&f.config, "config", "", "MicroShift config.yaml whose storage: section gates the components (default: none, i.e. defaults)")
	fl.StringVar(&f.configDir, "config-dir", "", "MicroShift config drop-in directory merged over --config as MicroShift does (default: config.d next to --config)")
	fl.BoolVar(&f.prune, "prune", false, "delete what an earlier start left of switched-off components (storage.driver: none; optionalCsiComponents without the snapshot controller): workloads, RBAC and webhooks MicroShift applied (never CRDs, volumes, claims, StorageClasses or snapshots)")
	fl.BoolVar(&f.force, "force", false, "with --prune, remove the storage driver even though PersistentVolumes or VolumeSnapshotContents of topolvm.io exist")
	fl.StringVar(&f.runtimeLvmdPath, "runtime-lvmd", applier.DefaultRuntimeLvmdPath, "where the LVMS era writes the lvmd copy vg-manager reads")
	fl.StringSliceVar(&f.volumeGroups, "volume-groups", nil, "volume groups to assume instead of running vgs, e.g. when applying from a machine without LVM")
	fl.BoolVar(&f.wait, "wait", false, "wait for the storage and snapshot workloads to become ready")
	fl.DurationVar(&f.waitTimeout, "wait-timeout", 5*time.Minute, "how long --wait waits")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "overall deadline, including retries while the API server is unreachable")
	addOutputFlag(fl, &f.output)
	_ = cmd.MarkFlagRequired("assets")
	return cmd
}

func runApply(ctx context.Context, streams IOStreams, f *applyFlags) (err error) {
	if err := checkOutput(f.output); err != nil {
		return err
	}
	log, err := f.logs.logger(streams.ErrOut)
	if err != nil {
		return err
	}
	if f.force && !f.prune {
		return usageError("--force only applies to --prune")
	}
	if err := checkDir("assets", f.assets); err != nil {
		return err
	}
	if err := checkApplyFiles(f); err != nil {
		return err
	}
	if f.timeout < 0 || f.waitTimeout < 0 {
		return usageError("--timeout and --wait-timeout must not be negative")
	}
	restCfg, err := loadKubeconfig(f.kubeconfig, f.context)
	if err != nil {
		return err
	}
	// -v 6 and up log the API requests as kubectl does (internal/httplog, secrets masked).
	restCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return httplog.New(rt, log) })
	storage, err := loadStorageConfig(f)
	if err != nil {
		return err
	}
	ctx, cancel := commandContext(ctx, f.timeout)
	defer cancel()
	defer func() { err = exitForInterrupt(ctx, err) }()

	var vgs applier.VolumeGroupLister = applier.VGSLister{}
	if len(f.volumeGroups) > 0 {
		vgs = applier.StaticVolumeGroups(f.volumeGroups)
	}
	res, err := applier.Apply(ctx, applier.Options{
		Assets:          safefile.FS(f.assets),
		Arch:            f.arch.one(),
		Storage:         storage,
		LvmdPath:        f.lvmd,
		RuntimeLvmdPath: f.runtimeLvmdPath,
		VolumeGroups:    vgs,
		RESTConfig:      restCfg,
		Logger:          log,
		Wait:            f.wait,
		WaitTimeout:     f.waitTimeout,
		Prune:           f.prune,
		ForcePrune:      f.force,
	})
	if res != nil {
		if perr := printApplyResult(streams.Out, f.output, f.logs.quiet, res); perr != nil && err == nil {
			return perr
		}
	}
	if err != nil {
		return fmt.Errorf("applying %s: %w", f.assets, err)
	}
	return nil
}

// checkApplyFiles checks, before the cluster is contacted, the files apply reads that the
// applier would otherwise read only after the assets: a --config-dir given must be a directory
// (the default config.d may be absent, as for MicroShift), and --lvmd, when present, a regular
// file within the applier's cap (absent, the volume groups vgs reports decide).
func checkApplyFiles(f *applyFlags) error {
	if f.configDir != "" {
		if err := checkDir("config-dir", f.configDir); err != nil {
			return err
		}
	}
	if _, err := os.Stat(f.lvmd); err == nil {
		if _, err := safefile.ReadFile(f.lvmd, safefile.Options{Follow: true, Max: applier.MaxLvmdFileSize}); err != nil {
			return inputError("lvmd", err)
		}
	}
	return nil
}

// loadStorageConfig reads --config and its drop-ins (--config-dir, default config.d next to it)
// as MicroShift merges them; without --config the storage section is empty (the defaults).
func loadStorageConfig(f *applyFlags) (applier.StorageConfig, error) {
	if f.config == "" {
		if f.configDir != "" {
			return applier.LoadStorageConfig("", f.configDir)
		}
		return applier.StorageConfig{}, nil
	}
	if _, err := os.Stat(f.config); err != nil {
		return applier.StorageConfig{}, inputError("config", err)
	}
	dir := f.configDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(f.config), "config.d")
	}
	return applier.LoadStorageConfig(f.config, dir)
}

// loadKubeconfig loads the client configuration as kubectl does
// (clientcmd.NewDefaultClientConfigLoadingRules): an explicit --kubeconfig wins (a list is merged
// like $KUBECONFIG), else the $KUBECONFIG list, else ~/.kube/config; --context overrides the
// current context.
func loadKubeconfig(kubeconfig, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if paths := filepath.SplitList(kubeconfig); len(paths) > 1 {
		rules.Precedence = paths
	} else {
		rules.ExplicitPath = kubeconfig
	}
	from := "--kubeconfig"
	if kubeconfig == "" {
		from = "kubeconfig ($KUBECONFIG, else " + clientcmd.RecommendedHomeFile + ")"
	}
	if err := checkKubeconfigs(rules.GetLoadingPrecedence(), from); err != nil {
		return nil, err
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// Nothing named and nothing found is a missing flag (usage); a file that is there but
		// holds no configuration is bad input.
		for _, p := range rules.GetLoadingPrecedence() {
			if _, serr := os.Stat(p); serr == nil {
				return nil, fmt.Errorf("%s: %s: an empty kubeconfig (no cluster, context or user)", from, p)
			}
		}
		return nil, usageError("--kubeconfig is required: $KUBECONFIG is not set and %s does not exist", clientcmd.RecommendedHomeFile)
	}
	if err != nil {
		from := kubeconfig
		if from == "" {
			from = strings.Join(rules.GetLoadingPrecedence(), string(filepath.ListSeparator))
		}
		if context != "" {
			from += " (context " + context + ")"
		}
		return nil, fmt.Errorf("loading kubeconfig %s: %w", from, err)
	}
	return cfg, nil
}

// printApplyResult prints the result as -o asks; with -q (quiet) the text summary is left out.
func printApplyResult(out io.Writer, format string, quiet bool, res *applier.Result) error {
	if output.IsMachine(format) {
		return output.Write(out, format, output.ApplyResult(res))
	}
	if !quiet {
		printApplyText(out, res)
	}
	return nil
}

func printApplyText(out io.Writer, res *applier.Result) {
	if res.Era != "" {
		fmt.Fprintf(out, "era: %s\n", res.Era)
	}
	if res.Lvmd.Message != "" {
		fmt.Fprintf(out, "lvmd: %s (sha256 %s)\n", res.Lvmd.Message, res.LvmdChecksum)
	}
	for _, l := range []struct {
		verb string
		refs []applier.ObjectRef
	}{{"created", res.Created}, {"updated", res.Updated}, {"deleted", res.Deleted}, {"unchanged", res.Unchanged}} {
		for _, r := range l.refs {
			fmt.Fprintf(out, "%s %s\n", l.verb, r)
		}
	}
	for _, r := range res.Remaining {
		fmt.Fprintf(out, "remaining %s\n", r)
	}
	for _, k := range res.Kept {
		fmt.Fprintf(out, "kept %s: %s\n", k.Object, k.Reason)
	}
	for _, c := range res.Components {
		switch {
		case c.Err != nil:
			fmt.Fprintf(out, "component %s: failed: %v\n", c.Name, c.Err)
		case !c.Enabled:
			fmt.Fprintf(out, "component %s: disabled\n", c.Name)
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(out, "skipped %s: %s\n", s.Object, s.Reason)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	fmt.Fprintf(out, "%d created, %d updated, %d deleted, %d unchanged, %d skipped\n",
		len(res.Created), len(res.Updated), len(res.Deleted), len(res.Unchanged), len(res.Skipped))
}
