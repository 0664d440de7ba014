data "qtail_policy" "current" {}

# Warn in every plan while the default allow-all rule of a new tailnet is
# still in the policy file: it lets every device reach every proxy. (A check
# block reports a warning; qtail_allow_all_removal removes the rule.)
check "no_allow_all_rule" {
  assert {
    condition     = !data.qtail_policy.current.findings.allow_all_present
    error_message = "The tailnet policy still has the default allow-all rule; delete it once the grants cover the access you need."
  }
}

# Every fragment qtail owns in the policy file, from any configuration.
output "qtail_fragments" {
  value = [for f in data.qtail_policy.current.fragments : "${f.kind} ${f.key}"]
}
