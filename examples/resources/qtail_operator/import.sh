# An operator is imported by the ID of its Qovery Helm service. Every
# attribute comes back from Qovery, the OAuth client ID included (from the
# plain variable TS_OAUTH_CLIENT_ID); the secret stays in Qovery's secret
# variable, so the first apply after an import writes oauth_client_secret_wo
# again and redeploys the operator. An OAuth client that qtail created is
# recognized by its description (create_oauth_client = true).
terraform import qtail_operator.us_east_1 7b4c1f0e-2d3a-4e5f-8a9b-0c1d2e3f4a5b
