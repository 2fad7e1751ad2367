#!/bin/bash
# Periodic LVMS rebase of every lagging MicroShift branch (docs/ci.md), in the style of
# MicroShift's scripts/auto-rebase/rebase_job_entrypoint.sh. Run it in a MicroShift clone.
#
#   PULL_SECRET   registry credentials file (default ~/.pull-secret.json)
#   REMOTE        remote to fetch branches from and push results to (default origin; skipped
#                 when the clone has no such remote)
#   DRY_RUN=y     rebase, but push nothing and open no pull request
#   PR_DIR        where the report and the PR bodies go (default: a temporary directory)
#   LVMS_REBASE   the lvms-rebase binary (default: lvms-rebase on PATH)
# Arguments are passed to every lvms-rebase call (e.g. --mirror, --cache-dir).
set -o errexit -o nounset -o pipefail

LVMS_REBASE="${LVMS_REBASE:-lvms-rebase}"
PULL_SECRET="${PULL_SECRET:-${HOME}/.pull-secret.json}"
REMOTE="${REMOTE:-origin}"
DRY_RUN="${DRY_RUN:-n}"
PR_DIR="${PR_DIR:-$(mktemp -d /tmp/lvms-rebase-job.XXXXXX)}"

title() {
    echo -e "\E[34m${1}\E[00m"
}

fetch_branches() {
    if ! git remote get-url "${REMOTE}" &>/dev/null; then
        echo "no remote ${REMOTE}: using the local branches as they are"
        return
    fi
    title "## Fetching main and release-* from ${REMOTE}"
    git fetch "${REMOTE}" "+refs/heads/main:refs/heads/main" "+refs/heads/release-*:refs/heads/release-*"
}

# outdated writes the report and prints the lagging branches, one per line. Exit 1 of
# `outdated` (a branch unreadable) still lists the others; it is reported at the end.
outdated() {
    local rc=0
    "${LVMS_REBASE}" outdated -o json -a "${PULL_SECRET}" "$@" >"${PR_DIR}/outdated.json" || rc=$?
    case "${rc}" in
    0 | 1 | 3) ;;
    *) return "${rc}" ;;
    esac
    jq -r '.items[] | "\(.branch): \(.status) \(.reason // "")"' "${PR_DIR}/outdated.json" >&2
    jq -r '.outdated[]' "${PR_DIR}/outdated.json"
}

# open_pr pushes lvms-rebase/<branch> and opens or updates its pull request with the body the
# report names (a '/' in a branch name is '_' in its file name). The remote branch may hold a
# reviewer's commits: it is pushed over only when every commit it has beyond <branch> was made
# by this job's identity, and with a lease on the commit checked.
open_pr() {
    local branch="$1" body="$2"
    if [[ "${DRY_RUN}" == "y" ]]; then
        echo "DRY_RUN: would push lvms-rebase/${branch} and open a pull request against ${branch} with ${body}"
        return
    fi
    local remote foreign
    remote="$(git ls-remote "${REMOTE}" "refs/heads/lvms-rebase/${branch}" | cut -f1)"
    if [[ -n "${remote}" ]]; then
        git fetch -q "${REMOTE}" "${remote}"
        foreign="$(git log --format='%h %ce %s' "${branch}..${remote}" | grep -v " $(git config user.email) " || true)"
        if [[ -n "${foreign}" ]]; then
            echo "lvms-rebase/${branch} on ${REMOTE} holds commits this job did not make; not pushing over them:" >&2
            echo "${foreign}" >&2
            return 1
        fi
    fi
    git push --force-with-lease="refs/heads/lvms-rebase/${branch}:${remote}" "${REMOTE}" "lvms-rebase/${branch}"
    gh pr create --base "${branch}" --head "lvms-rebase/${branch}" --title "[${branch}] LVMS rebase" \
        --body-file "${body}" ||
        gh pr edit "lvms-rebase/${branch}" --body-file "${body}"
}

main() {
    fetch_branches
    title "## Which branches lag?"
    local branches
    mapfile -t branches < <(outdated "$@")
    local failed=0
    jq -e '.errors | length == 0' "${PR_DIR}/outdated.json" >/dev/null || failed=1
    if [[ ${#branches[@]} -eq 0 ]]; then
        echo "no branch lags"
        return "${failed}"
    fi
    title "## Rebasing ${branches[*]}"
    local list
    list="$(IFS=,; echo "${branches[*]}")"
    "${LVMS_REBASE}" --branches "${list}" --commit --pr-body-dir "${PR_DIR}" -o json -a "${PULL_SECRET}" "$@" \
        >"${PR_DIR}/rebase.json" || failed=1
    local branch body
    while IFS=$'\t' read -r branch body; do
        title "## Pull request for ${branch}"
        open_pr "${branch}" "${body}" || failed=1
    done < <(jq -r '.items[] | select(.error == null or .error == "") | "\(.branch)\t\(.prBody)"' "${PR_DIR}/rebase.json")
    jq -r '.items[] | select(.error != null and .error != "") | "\(.branch): \(.error)"' "${PR_DIR}/rebase.json" >&2
    return "${failed}"
}

main "$@"
