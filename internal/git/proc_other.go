//go:build !unix

package git

import (
	"os/exec"
	"syscall"
)

func ownGroup(*exec.Cmd) {}

// signalGroup stops git itself (no process groups here).
func signalGroup(cmd *exec.Cmd, _ syscall.Signal) error {
	return cmd.Process.Kill()
}
