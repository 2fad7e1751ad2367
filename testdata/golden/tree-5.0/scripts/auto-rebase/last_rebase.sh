#!/bin/bash -x
./scripts/auto-rebase/rebase.sh to "registry.ci.openshift.org/ocp/release-5:5.0.0-0.nightly-2026-07-23-224236" "registry.ci.openshift.org/ocp-arm64/release-arm64-5:5.0.0-0.nightly-arm64-2026-07-27-004356"
