// Package attack is the attack suite of issue 28: the lvms-rebase binary run as a real process
// (built once, with the write failpoints), against one loopback registry (a misbehaving one of
// its own for a row that needs it) and one real kube-apiserver for apply, over every command ×
// mode × input class — empty, absent, special file (a symlink to a device, a FIFO, a
// directory), huge, duplicated, wrapped, colliding, concurrent, killed or interrupted (real
// signals) — with the invariants checked as properties of every row, not as expectations of
// one:
//
//  1. Exit 0 means done: a write leaves a tree whose every locked file holds the lock's bytes
//     and that --check renders back to itself; with --commit HEAD holds exactly the lock's
//     bytes and git sees none of our paths modified; --branches leaves each lvms-rebase/<b>
//     holding its lock's bytes and no worktree; outdated has checked at least one branch.
//  2. Nothing outside what the mode may change, changed: each row's world (the tree with its
//     .git — hooks, config, refs —, the image cache, $HOME, $TMPDIR, the inputs it was given
//     and the outputs it asked for) is snapshotted whole before and after, and every
//     difference must be one the mode may make given how the run ended.
//  3. No object without proven ownership deleted: before every apply row the whole cluster is
//     listed; every object the run deleted must have been provably MicroShift's (our field
//     manager's Apply entry, no other writer, no OLM mark, no controller but a workload), read
//     from the object alone. The prune row seeds look-alikes a person, kubectl or OLM made.
//  4. Every process ends within its bound: a hang detector kills a process still running
//     after a minute and fails the row with "did not end".
//  5. Exit codes by type: the exit code is the row's (usage 2, error 1, --check/--diff
//     difference 3, SIGINT 130, SIGTERM 143, and 130/143 only after that signal); exit 1 or 2
//     prints exactly one "Error: " line, naming the input.
//  6. Empty is never none: every list-taking flag of every command, read from its own --help,
//     given an empty or blank list, is a usage error naming the flag; an empty row can never
//     expect exit 0.
//
// A new flag, file read, network call or deletion adds its rows: list flags get theirs from
// --help; other inputs go into the tables (hostileTreeFiles, hostileFlags, the command tests).
// README.md records, per invariant, the guard removed to show the suite fails without it.
package attack
