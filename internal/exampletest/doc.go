// Package exampletest runs qtail's Terraform examples and modules as a user
// would, with a real Terraform CLI and the provider binary built from this
// tree (through a dev_overrides CLI configuration, or a filesystem mirror
// of its release archives, so that nothing is downloaded), against the
// sandbox served on loopback:
//
//   - terraform test in each module of examples/modules;
//   - examples/multi-region: the platform root, then both region roots at
//     the same time, then every root planned again, then one region
//     destroyed;
//   - a root that uses the region module with for_each over two regions;
//   - every example and module pins the tailnet-manifests chart from qtail's
//     Helm repository at the version this tree releases;
//   - examples/ci/rehearse.sh: the CI examples' steps on a copy of
//     examples/multi-region that installs qtail from release archives only
//     (a filesystem mirror, lock files for three platforms), and every step
//     the workflows run is one it ran;
//   - make install-local's rebuilds: a newer version each time, which
//     terraform init -upgrade selects.
//
// The package has tests only.
package exampletest
