// Package policyfragment holds the resources that own one fragment each of
// the tailnet policy file (qtail_grant, qtail_tag_owner,
// qtail_auto_approver, qtail_policy_test), their shared lifecycle, the
// qtail_allow_all_removal resource and the qtail_policy data source. They
// read and write through the policy.Store of the provider instance and
// check their changes at plan time with its policy.Planner.
package policyfragment
