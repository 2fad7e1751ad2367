package v1alpha1

// BranchRebaseList is what `--branches a,b` did: each branch rebased in its own worktree, in
// the order given.
type BranchRebaseList struct {
	TypeMeta `json:",inline"`
	// Items are the branches' outcomes.
	Items []BranchRebase `json:"items"`
	// Failed lists the branches that failed.
	Failed []string `json:"failed"`
	// StaleWorktrees are the worktrees of an earlier, killed run of the tool that this run
	// removed first.
	StaleWorktrees []string `json:"staleWorktrees,omitempty"`
}

// BranchRebase is one branch's outcome.
type BranchRebase struct {
	// Branch is the branch rebased.
	Branch string `json:"branch"`
	// ResultBranch is the branch holding the result (lvms-rebase/<branch>).
	ResultBranch string `json:"resultBranch,omitempty"`
	// Commit is the result branch's tip.
	Commit string `json:"commit,omitempty"`
	// PRBody is the file the pull-request body was written to.
	PRBody string `json:"prBody,omitempty"`
	// Result is the branch's rebase (without apiVersion and kind).
	Result *RebaseResult `json:"result,omitempty"`
	// Error says why the branch failed.
	Error string `json:"error,omitempty"`
}
