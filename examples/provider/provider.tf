terraform {
  required_version = ">= 1.11"
  required_providers {
    qtail = {
      source  = "qtail/qtail"
      version = "~> 0.1"
    }
  }
}

# Credentials come from the environment:
#   QOVERY_API_TOKEN, and TAILSCALE_API_KEY or
#   TAILSCALE_OAUTH_CLIENT_ID with TAILSCALE_OAUTH_CLIENT_SECRET.
provider "qtail" {
  # The tailnet of the Tailscale credential.
  tailscale_tailnet = "-"
}
