// Package microshift is a test module shaped like MicroShift after the patch docs/embedding.md
// describes, so that the patch is compiled and run, not only read:
//
//   - its module path is MicroShift's, so pkg/components/storage.go is byte for byte the
//     startCSIPlugin the doc shows (TestEmbeddingDocPatchIsTheConsumer checks it), apart from
//     the lines marked "consumer-only" (test seams for the lvmd paths and the volume groups);
//   - assets/embed.go embeds an assets/ tree as MicroShift's does (package embedded), with the
//     one function the patch adds; hack/test-consumer.sh copies a golden rebase output
//     (testdata/golden/tree-4.22/assets) into a temporary copy of this module before testing;
//   - pkg/assets/crd.go applies the storage CRDs under MicroShift's own field manager first, as
//     MicroShift's ApplyCRDs does;
//   - go.mod requires what MicroShift release-4.17 requires (k8s.io/* v0.30.1,
//     sigs.k8s.io/yaml v1.3.0, fsnotify v1.7.0, logr v1.4.2, klog v2.120.1), and the script
//     checks that requiring the applier moved none of them.
//
// Run it with `hack/test-consumer.sh` (part of `make test`).
package microshift
