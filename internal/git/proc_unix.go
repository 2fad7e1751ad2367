//go:build unix

package git

import (
	"os/exec"
	"syscall"
)

// ownGroup starts git in a process group of its own, so that stopping it also stops the hooks
// it runs: a hook left running would hold git's output open and outlive the cancelled run.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to git's process group.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
