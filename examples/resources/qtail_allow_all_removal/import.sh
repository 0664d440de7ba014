# A tailnet has one policy file, so the ID is always "allow_all". The import
# succeeds only when the allow-all rule is already gone.
terraform import qtail_allow_all_removal.this allow_all
