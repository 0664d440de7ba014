// Package exampletest runs qtail's Terraform examples and modules as a user
// would, with a real Terraform CLI and the provider binary built from this
// tree (through a dev_overrides CLI configuration, so that nothing is
// downloaded), against the sandbox served on loopback:
//
//   - terraform test in each module of examples/modules;
//   - examples/multi-region: the platform root, then both region roots at
//     the same time, then every root planned again, then one region
//     destroyed;
//   - a root that uses the region module with for_each over two regions;
//   - every example and module pins the tailnet-manifests chart from qtail's
//     Helm repository at the version this tree releases.
//
// The package has tests only.
package exampletest
